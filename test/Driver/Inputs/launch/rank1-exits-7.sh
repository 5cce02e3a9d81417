#!/bin/sh
# A stand-in for OUT/train (launch.test): rank 1 fails with exit code 7.
if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then
  echo "rank 1 fails" >&2
  exit 7
fi
echo "rank $OMPI_COMM_WORLD_RANK ok, OMP_NUM_THREADS=$OMP_NUM_THREADS"
