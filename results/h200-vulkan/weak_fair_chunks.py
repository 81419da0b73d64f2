# Splits a complete configuration's weak-fair conformance tests
# (suites/CFG/conformance/WEAK_FAIR.txt) into RON suites of CHUNK tests, so
# that nvcc builds them in parallel. Usage: weak_fair_chunks.py CFG CHUNK DIR
import re, sys, os
cfg, chunk, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
want = [l.strip() for l in open(f"suites/{cfg}/conformance/WEAK_FAIR.txt") if l.strip()]
text = open(f"suites/{cfg}/{cfg}.ron").read()
start = text.index("  tests: [\n") + len("  tests: [\n")
body = text[start:]
blocks = {}
for m in re.finditer(r"    Test\(\n      name: \"([^\"]+)\",\n.*?\n    \),\n", body, re.S):
    blocks[m.group(1)] = m.group(0)
missing = [n for n in want if n not in blocks]
assert not missing, missing[:5]
for i in range(0, len(want), chunk):
    names = want[i:i+chunk]
    k = i // chunk
    with open(f"{out}/{cfg}-{k:02}.ron", "w") as f:
        f.write(f'Suite(\n  name: "{cfg}",\n  note: "weak-fair conformance tests of {cfg}, part {k}",\n  tests: [\n')
        for n in names: f.write(blocks[n])
        f.write("  ],\n)\n")
print(cfg, len(want), len(blocks))
