#!/bin/sh
# A stand-in for a GPU program's OUT/train (launch.test, launch_netns.sh):
# each rank prints the GPUs zeroc launch gave it.
echo "rank $OMPI_COMM_WORLD_RANK local $OMPI_COMM_WORLD_LOCAL_RANK CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset}"
