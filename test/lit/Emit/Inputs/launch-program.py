"""A stand-in for an emitted program (launch tests): prints what the launcher
gave this rank and its arguments. With WEFT_TEST_FAIL_RANK=R, rank R exits
with status 3 and every other rank waits 30 s and then reports that it
finished, which a launcher that stops the others on a failure never lets it
do."""
import os
import sys
import time

KEYS = ("RANK", "LOCAL_RANK", "GROUP_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
        "MASTER_ADDR", "CUDA_VISIBLE_DEVICES")
print("rank " + " ".join("%s=%s" % (k, os.environ.get(k, "unset")) for k in KEYS)
      + " argv=" + " ".join(sys.argv[1:]), flush=True)
fail = os.environ.get("WEFT_TEST_FAIL_RANK")
if fail is not None:
    if os.environ["RANK"] == fail:
        sys.exit(3)
    time.sleep(30)
    print("rank %s finished" % os.environ["RANK"], flush=True)
