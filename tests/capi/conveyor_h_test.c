/* conveyor.h is pure C: this file compiles as strict C11 and uses the API from C. */
#include "core/capi/conveyor.h"

#include <stdio.h>

static int failures = 0;

#define EXPECT(cond)                                                    \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                       \
    }                                                                   \
  } while (0)

int main(void) {
  EXPECT(conveyor_abi_version() == CONVEYOR_ABI_VERSION);
  const int64_t shape[2] = {2, 3};
  conveyor_tensor_t t = NULL;
  EXPECT(conveyor_tensor_empty(2, shape, CONVEYOR_DTYPE_INT32, CONVEYOR_DEVICE_CPU, 0, -1, &t) == CONVEYOR_OK);
  conveyor_tensor_info_t info;
  EXPECT(conveyor_tensor_info(t, &info) == CONVEYOR_OK);
  EXPECT(info.ndim == 2 && info.shape[1] == 3 && info.strides[0] == 3);
  EXPECT(info.dtype == CONVEYOR_DTYPE_INT32 && info.device_type == CONVEYOR_DEVICE_CPU);
  struct DLManagedTensorVersioned* exported = NULL;
  EXPECT(conveyor_tensor_to_dlpack_versioned(t, -1, &exported) == CONVEYOR_OK);
  conveyor_dlpack_versioned_delete(exported);
  conveyor_tensor_release(t);
  EXPECT(conveyor_tensor_info(NULL, &info) == CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT(conveyor_last_error()[0] != '\0');
  if (failures == 0) printf("conveyor.h works from C\n");
  return failures == 0 ? 0 : 1;
}
