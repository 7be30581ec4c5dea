package checkpoint

import "maps"

// cloneBytes copies b, keeping nil and empty distinct.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append(make([]string, 0, len(s)), s...)
}

// cloneCheckpoint returns a deep copy of cp, so neither the caller nor the
// store can alias the other's memory.
func cloneCheckpoint(cp Checkpoint) Checkpoint {
	out := cp
	out.Ran = cloneStrings(cp.Ran)
	out.Next = cloneStrings(cp.Next)
	if cp.Values != nil {
		out.Values = make(map[string][]byte, len(cp.Values))
		for k, v := range cp.Values {
			out.Values[k] = cloneBytes(v)
		}
	}
	if cp.Interrupt != nil {
		in := *cp.Interrupt
		in.Payload = cloneBytes(cp.Interrupt.Payload)
		if cp.Interrupt.Answers != nil {
			in.Answers = make([][]byte, len(cp.Interrupt.Answers))
			for i, a := range cp.Interrupt.Answers {
				in.Answers[i] = cloneBytes(a)
			}
		}
		out.Interrupt = &in
	}
	out.Meta = maps.Clone(cp.Meta)
	out.Summary = cloneBytes(cp.Summary)
	out.Time = cp.Time.Round(0) // drop the monotonic reading, as a disk store would
	return out
}

func cloneWrite(w Write) Write {
	w.Value = cloneBytes(w.Value)
	return w
}
