# Generates difflib_ratios.json: Python difflib.SequenceMatcher ratios that
# TestRatioMatchesDifflib checks Ratio against. Run: python3 difflib_ratios.py
import difflib, json
pairs = [
 ("", ""), ("abc", ""), ("abcd", "bcde"), ("abcd", "abcd"),
 ("private Thread currentThread;", "private volatile Thread currentThread;"),
 ("qabxcd", "abycdf"),
 ("ünïcödé 日本語 text", "unicode 日本 text"),
 ("undefined: parseConfig", "undefined: parseConfg"),
 ("a"*250 + "b", "b" + "a"*250),
 (("the quick brown fox jumps over the lazy dog. " * 6), ("the quick brown cat jumps over the lazy dog! " * 6)),
 ("x = " + "e"*120 + " end", "x = " + "e"*119 + "f end" + " pad"*50),
 ("--- FAIL: TestParse (<dur>)\nparse_test.go:<n>: got 3, want 4", "--- FAIL: TestParse (<dur>)\nparse_test.go:<n>: got 5, want 4"),
]
import random
r = random.Random(7)
for n in (150, 260, 400):
    a = "".join(r.choice("ab cd\n") for _ in range(n))
    b = "".join(r.choice("abc d\n") for _ in range(n+13))
    pairs.append((a,b))
out=[]
for a,b in pairs:
    out.append({"a":a,"b":b,"ab":difflib.SequenceMatcher(None,a,b).ratio(),"ba":difflib.SequenceMatcher(None,b,a).ratio(),"noauto":difflib.SequenceMatcher(None,a,b,autojunk=False).ratio()})
json.dump(out, open("difflib_ratios.json","w"), ensure_ascii=False, indent=1)
print(sum(1 for o in out if abs(o["ab"]-o["noauto"])>1e-12), "pairs where autojunk matters;", sum(1 for o in out if abs(o["ab"]-o["ba"])>1e-12), "asymmetric")
