// Our own typed declarations of the part of the nvJPEG2000 C API that Conveyor uses, written from
// NVIDIA's nvJPEG2000 documentation (docs.nvidia.com/cuda/nvjpeg2000). Nothing links nvJPEG2000 at
// build time: nvjpeg2k_loader.h opens libnvjpeg2k with dlopen and fills Nvjpeg2kApi with dlsym.
//
// | declaration                    | documented layout / values                                    |
// |--------------------------------|---------------------------------------------------------------|
// | nvjpeg2kStatus_t               | int enum, SUCCESS = 0 ... IMPLEMENTATION_NOT_SUPPORTED = 9     |
// | nvjpeg2kImageType_t            | UINT8 0, UINT16 1, INT16 2 (int enum)                          |
// | nvjpeg2kImageInfo_t            | 7 x uint32: width, height, tile w/h, tiles x/y, components     |
// | nvjpeg2kImageComponentInfo_t   | uint32 width, uint32 height, uint8 precision, uint8 sgn        |
// | nvjpeg2kImage_t                | void** pixel_data; size_t* pitch_in_bytes; type; uint32 count  |
// | nvjpeg2k*AllocatorV2_t         | {malloc(ctx, ptr*, size, stream), free(ctx, ptr, size, stream), ctx} |
// | handles                        | pointers to opaque structs                                     |
//
// nvjpeg2kStreamParse takes the stream handle itself (not a pointer to it), as the library's
// current documentation and symbol do.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace conveyor::nvjpeg2k {

enum nvjpeg2kStatus_t : int {
  NVJPEG2K_STATUS_SUCCESS = 0,
  NVJPEG2K_STATUS_NOT_INITIALIZED = 1,
  NVJPEG2K_STATUS_INVALID_PARAMETER = 2,
  NVJPEG2K_STATUS_BAD_JPEG = 3,
  NVJPEG2K_STATUS_JPEG_NOT_SUPPORTED = 4,
  NVJPEG2K_STATUS_ALLOCATOR_FAILURE = 5,
  NVJPEG2K_STATUS_EXECUTION_FAILED = 6,
  NVJPEG2K_STATUS_ARCH_MISMATCH = 7,
  NVJPEG2K_STATUS_INTERNAL_ERROR = 8,
  NVJPEG2K_STATUS_IMPLEMENTATION_NOT_SUPPORTED = 9,
};

enum nvjpeg2kBackend_t : int { NVJPEG2K_BACKEND_DEFAULT = 0 };

enum nvjpeg2kImageType_t : int { NVJPEG2K_UINT8 = 0, NVJPEG2K_UINT16 = 1, NVJPEG2K_INT16 = 2 };

struct nvjpeg2kImageInfo_t {
  uint32_t image_width;
  uint32_t image_height;
  uint32_t tile_width;
  uint32_t tile_height;
  uint32_t num_tiles_x;
  uint32_t num_tiles_y;
  uint32_t num_components;
};

struct nvjpeg2kImageComponentInfo_t {
  uint32_t component_width;
  uint32_t component_height;
  uint8_t precision;
  uint8_t sgn;
};

struct nvjpeg2kImage_t {
  void** pixel_data;        // one device pointer per component (planar, the library's default)
  size_t* pitch_in_bytes;   // one pitch per component
  nvjpeg2kImageType_t pixel_type;
  uint32_t num_components;
};

// Stream-ordered allocators with a context (the "V2" interface): return 0 on success. The same
// shape as nvJPEG's, so GpuDecoder hands both libraries the same pools (nvjpeg_allocators.h).
using tNvjpeg2kMallocV2 = int (*)(void* ctx, void** ptr, size_t size, cudaStream_t stream);
using tNvjpeg2kFreeV2 = int (*)(void* ctx, void* ptr, size_t size, cudaStream_t stream);

struct nvjpeg2kDeviceAllocatorV2_t {
  tNvjpeg2kMallocV2 device_malloc;
  tNvjpeg2kFreeV2 device_free;
  void* device_ctx;
};
struct nvjpeg2kPinnedAllocatorV2_t {
  tNvjpeg2kMallocV2 pinned_malloc;
  tNvjpeg2kFreeV2 pinned_free;
  void* pinned_ctx;
};

// Opaque handles.
using nvjpeg2kHandle_t = struct nvjpeg2kHandle*;
using nvjpeg2kDecodeState_t = struct nvjpeg2kDecodeState*;
using nvjpeg2kStream_t = struct nvjpeg2kStream*;
using nvjpeg2kDecodeParams_t = struct nvjpeg2kDecodeParams*;

static_assert(sizeof(nvjpeg2kStatus_t) == sizeof(int) && sizeof(nvjpeg2kImageType_t) == sizeof(int) &&
                  sizeof(nvjpeg2kBackend_t) == sizeof(int),
              "nvJPEG2000 enums are C ints");
static_assert(sizeof(nvjpeg2kImageInfo_t) == 7 * sizeof(uint32_t));
static_assert(sizeof(nvjpeg2kImageComponentInfo_t) == 12 && offsetof(nvjpeg2kImageComponentInfo_t, sgn) == 9);
static_assert(offsetof(nvjpeg2kImage_t, pixel_type) == 2 * sizeof(void*) &&
              offsetof(nvjpeg2kImage_t, num_components) == 2 * sizeof(void*) + 4 &&
              sizeof(nvjpeg2kImage_t) == 3 * sizeof(void*));
static_assert(sizeof(nvjpeg2kDeviceAllocatorV2_t) == 3 * sizeof(void*));
static_assert(sizeof(nvjpeg2kPinnedAllocatorV2_t) == 3 * sizeof(void*));

// The entry points: X(name, parameter list). Every one returns nvjpeg2kStatus_t.
#define CONVEYOR_NVJPEG2K_REQUIRED_FUNCTIONS(X)                                                            \
  X(nvjpeg2kGetProperty, (int type, int* value))                                                           \
  X(nvjpeg2kCreateSimple, (nvjpeg2kHandle_t * handle))                                                     \
  X(nvjpeg2kDestroy, (nvjpeg2kHandle_t handle))                                                            \
  X(nvjpeg2kDecodeStateCreate, (nvjpeg2kHandle_t handle, nvjpeg2kDecodeState_t * state))                  \
  X(nvjpeg2kDecodeStateDestroy, (nvjpeg2kDecodeState_t state))                                             \
  X(nvjpeg2kStreamCreate, (nvjpeg2kStream_t * stream))                                                     \
  X(nvjpeg2kStreamDestroy, (nvjpeg2kStream_t stream))                                                      \
  X(nvjpeg2kStreamParse, (nvjpeg2kHandle_t handle, const unsigned char* data, size_t length,              \
                          int save_metadata, int save_stream, nvjpeg2kStream_t stream))                    \
  X(nvjpeg2kStreamGetImageInfo, (nvjpeg2kStream_t stream, nvjpeg2kImageInfo_t * info))                     \
  X(nvjpeg2kStreamGetImageComponentInfo, (nvjpeg2kStream_t stream, nvjpeg2kImageComponentInfo_t * info,    \
                                          uint32_t component))                                             \
  X(nvjpeg2kDecodeParamsCreate, (nvjpeg2kDecodeParams_t * params))                                         \
  X(nvjpeg2kDecodeParamsDestroy, (nvjpeg2kDecodeParams_t params))                                          \
  X(nvjpeg2kDecodeParamsSetDecodeArea, (nvjpeg2kDecodeParams_t params, uint32_t start_x, uint32_t end_x,   \
                                        uint32_t start_y, uint32_t end_y))                                 \
  X(nvjpeg2kDecodeImage, (nvjpeg2kHandle_t handle, nvjpeg2kDecodeState_t state, nvjpeg2kStream_t stream,   \
                          nvjpeg2kDecodeParams_t params, nvjpeg2kImage_t * output, cudaStream_t cuda_stream))

// Newer entry points: without nvjpeg2kCreateV2 (before 0.7) the library allocates with cudaMalloc /
// cudaHostAlloc itself instead of from our pools.
#define CONVEYOR_NVJPEG2K_OPTIONAL_FUNCTIONS(X)                                                            \
  X(nvjpeg2kCreateV2, (nvjpeg2kBackend_t backend, nvjpeg2kDeviceAllocatorV2_t * device_allocator,          \
                       nvjpeg2kPinnedAllocatorV2_t * pinned_allocator, nvjpeg2kHandle_t * handle))

// The function table the loader fills. Optional members may be null.
struct Nvjpeg2kApi {
#define CONVEYOR_NVJPEG2K_MEMBER(name, params) nvjpeg2kStatus_t(*name) params = nullptr;
  CONVEYOR_NVJPEG2K_REQUIRED_FUNCTIONS(CONVEYOR_NVJPEG2K_MEMBER)
  CONVEYOR_NVJPEG2K_OPTIONAL_FUNCTIONS(CONVEYOR_NVJPEG2K_MEMBER)
#undef CONVEYOR_NVJPEG2K_MEMBER
};

// "NVJPEG2K_STATUS_BAD_JPEG"; "nvjpeg2kStatus_t(unknown)" for values the documentation does not list.
const char* StatusName(nvjpeg2kStatus_t status);

}  // namespace conveyor::nvjpeg2k
