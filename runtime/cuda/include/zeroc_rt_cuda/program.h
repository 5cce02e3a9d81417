/*===- zeroc_rt_cuda/program.h - What a CUDA program includes -----*- C -*-===//
 *
 * `zeroc compile --target cuda` emits train.cu: zeroc_rt/train.h's program
 * whose micro-step calls the kernels of zeroc_rt_cuda/kernels.h on device
 * memory (the arena, the parameters, the gradients and the micro-batches
 * are the GPU's), and whose main() returns through
 * zeroc_rt_cuda_train_process_main.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_RT_CUDA_PROGRAM_H
#define ZEROC_RT_CUDA_PROGRAM_H

#include "zeroc_rt/train.h"
#include "zeroc_rt_cuda/kernels.h"

#include <stddef.h>

ZEROC_RT_EXTERN_C_BEGIN

/// zeroc_rt_train_main on the process's GPU: picks GPU (local rank) mod
/// (GPUs seen), opens the collectives' communicator (--comm nccl, the
/// default, or mpi) and trains with the state in device memory.
int zeroc_rt_cuda_train_process_main(int argc, char **argv,
                                     const zeroc_rt_program_t *program);

/// Copies between host memory and the device (after the work queued on the
/// compute stream; download returns when `dst` holds the bytes).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_download(void *dst,
                                                           const void *src,
                                                           size_t bytes);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_upload(void *dst,
                                                         const void *src,
                                                         size_t bytes);

ZEROC_RT_EXTERN_C_END

#endif /* ZEROC_RT_CUDA_PROGRAM_H */
