package recovery

// Ratio returns the similarity of a and b in [0, 1], computed as Python's
// difflib.SequenceMatcher(None, a, b).ratio(): 2*M/T, where T is the total
// number of runes in both strings and M the number of runes in the
// matching blocks that the Ratcliff/Obershelp algorithm finds (the
// longest common block, then recursively the longest blocks to its left
// and right). Two empty strings have ratio 1.
//
// It compares runes (Python compares code points), so it gives Python's
// figure for any valid UTF-8 text. The autojunk heuristic is the same as
// Python's default: when b has 200 runes or more, a rune that occurs more
// than len(b)/100+1 times in b is "popular" and cannot start a match,
// although a match may still be extended over it. There is no isjunk
// function, so nothing is junk. Like Python's, the ratio is not symmetric
// in general: Ratio(a, b) and Ratio(b, a) can differ.
func Ratio(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	total := len(ra) + len(rb)
	if total == 0 {
		return 1
	}
	return 2 * float64(matches(ra, rb)) / float64(total)
}

type block struct{ i, j, size int }

// matches returns the number of runes in the matching blocks of a and b,
// as difflib's get_matching_blocks.
func matches(a, b []rune) int {
	b2j := chainB(b)
	type span struct{ alo, ahi, blo, bhi int }
	queue := []span{{0, len(a), 0, len(b)}}
	var blocks []block
	for len(queue) > 0 {
		s := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		m := longestMatch(a, b, b2j, s.alo, s.ahi, s.blo, s.bhi)
		if m.size == 0 {
			continue
		}
		blocks = append(blocks, m)
		if s.alo < m.i && s.blo < m.j {
			queue = append(queue, span{s.alo, m.i, s.blo, m.j})
		}
		if m.i+m.size < s.ahi && m.j+m.size < s.bhi {
			queue = append(queue, span{m.i + m.size, s.ahi, m.j + m.size, s.bhi})
		}
	}
	n := 0
	for _, bl := range blocks {
		n += bl.size
	}
	return n
}

// chainB maps each rune of b to the ascending positions where it occurs,
// leaving out the popular runes (difflib's autojunk).
func chainB(b []rune) map[rune][]int {
	b2j := make(map[rune][]int)
	for j, r := range b {
		b2j[r] = append(b2j[r], j)
	}
	if n := len(b); n >= 200 {
		ntest := n/100 + 1
		for r, idx := range b2j {
			if len(idx) > ntest {
				delete(b2j, r)
			}
		}
	}
	return b2j
}

// longestMatch is difflib's find_longest_match with no junk: the longest
// block a[i:i+k] == b[j:j+k] within the bounds, the earliest in a and then
// in b among equals, extended on both ends over equal (possibly popular)
// runes.
func longestMatch(a, b []rune, b2j map[rune][]int, alo, ahi, blo, bhi int) block {
	besti, bestj, bestsize := alo, blo, 0
	j2len := map[int]int{}
	for i := alo; i < ahi; i++ {
		next := make(map[int]int, len(j2len))
		for _, j := range b2j[a[i]] {
			if j < blo {
				continue
			}
			if j >= bhi {
				break
			}
			k := j2len[j-1] + 1
			next[j] = k
			if k > bestsize {
				besti, bestj, bestsize = i-k+1, j-k+1, k
			}
		}
		j2len = next
	}
	for besti > alo && bestj > blo && a[besti-1] == b[bestj-1] {
		besti, bestj, bestsize = besti-1, bestj-1, bestsize+1
	}
	for besti+bestsize < ahi && bestj+bestsize < bhi && a[besti+bestsize] == b[bestj+bestsize] {
		bestsize++
	}
	return block{besti, bestj, bestsize}
}
