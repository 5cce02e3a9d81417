/*===- c_api_smoke.c - The public headers compile as C -------------------===*/
/*                                                                           */
/* Built as part of the unit tests to keep zeroc_rt.h valid C.               */
/*                                                                           */
/*===---------------------------------------------------------------------===*/

#include "zeroc_rt/zeroc_rt.h"

int zeroc_rt_c_api_smoke(void) {
  zeroc_rt_comm_t *comm = NULL;
  zeroc_rt_status_t status = zeroc_rt_comm_init_self(&comm);
  if (status) {
    zeroc_rt_status_free(status);
    return 1;
  }
  int ok = zeroc_rt_comm_size(comm) == 1;
  status = zeroc_rt_comm_finalize(comm);
  ok = ok && status == NULL;
  zeroc_rt_status_free(status);
  return ok ? 0 : 1;
}
