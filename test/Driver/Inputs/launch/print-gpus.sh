#!/bin/sh
# A stand-in for a GPU program's OUT/train (launch.test, launch_netns.sh):
# each rank prints the GPUs zeroc launch gave it, and two variables it may
# have exported (from the environment, from .deepspeed_env).
echo "rank $OMPI_COMM_WORLD_RANK local $OMPI_COMM_WORLD_LOCAL_RANK CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset}${NCCL_SOCKET_IFNAME:+ NCCL_SOCKET_IFNAME=$NCCL_SOCKET_IFNAME}${GREETING:+ GREETING=$GREETING}"
