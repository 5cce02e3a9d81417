"""Compares max_allocated_bytes with plan.json (max-allocated.test)."""
import json
import sys


def measure(out, log):
    plan = json.load(open(out + "/plan.json"))
    planned = plan["allocated_bytes"]
    assert planned == (plan["arena_bytes"] + plan["model_state_bytes"]["total"] +
                       plan["row_exchange_bytes"] + plan["optimizer_scratch_bytes"]), plan
    records = [json.loads(line) for line in open(log)]
    return records[-1]["max_allocated_bytes"], planned


for stage, (out, log) in ((0, sys.argv[1:3]), (3, sys.argv[3:5])):
    got, planned = measure(out, log)
    print("cpu stage %d: allocated %s plan" % (
        stage, "=" if got == planned else "!= (%d vs %d)" % (got, planned)))
got, planned = measure(sys.argv[5], sys.argv[6])
extra = got - planned
ok = 0 <= extra < 0.02 * planned
print("cuda-emu stage 3: allocated = plan + %d bytes (%s)" % (extra, "< 2%" if ok else "%.1f%%: too much" % (100.0 * extra / planned)))
# bf16 on one rank: narrowed accumulators and the optimizer's conversion
# scratch.
if len(sys.argv) > 7:
    got, planned = measure(sys.argv[7], sys.argv[8])
    print("cpu bf16 one rank: allocated %s plan" % (
        "=" if got == planned else "!= (%d vs %d)" % (got, planned)))
