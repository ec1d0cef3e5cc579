// Our own typed declarations of the part of the nvJPEG C API that Conveyor uses, written from
// NVIDIA's nvJPEG documentation (docs.nvidia.com/cuda/nvjpeg). Nothing links nvJPEG at build
// time: nvjpeg_loader.h opens the library with dlopen and fills NvjpegApi with dlsym.
//
// | declaration                  | documented layout / values                                   |
// |------------------------------|--------------------------------------------------------------|
// | nvjpegStatus_t               | int enum, SUCCESS = 0 ... INCOMPLETE_BITSTREAM = 10          |
// | nvjpegBackend_t              | DEFAULT 0, HYBRID 1, GPU_HYBRID 2, HARDWARE 3, ...           |
// | nvjpegOutputFormat_t         | UNCHANGED 0, YUV 1, Y 2, RGB 3, BGR 4, RGBI 5, BGRI 6        |
// | nvjpegImage_t                | unsigned char* channel[4]; size_t pitch[4]                  |
// | nvjpeg*AllocatorV2_t         | {malloc(ctx, ptr*, size, stream), free(ctx, ptr, size, stream), ctx} |
// | handles                      | pointers to opaque structs                                   |
//
// Only the members whose values the documentation fixes are declared; an enum we pass to the
// library is an int on the C ABI (static_asserts below).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace conveyor::nvjpeg {

enum nvjpegStatus_t : int {
  NVJPEG_STATUS_SUCCESS = 0,
  NVJPEG_STATUS_NOT_INITIALIZED = 1,
  NVJPEG_STATUS_INVALID_PARAMETER = 2,
  NVJPEG_STATUS_BAD_JPEG = 3,
  NVJPEG_STATUS_JPEG_NOT_SUPPORTED = 4,
  NVJPEG_STATUS_ALLOCATOR_FAILURE = 5,
  NVJPEG_STATUS_EXECUTION_FAILED = 6,
  NVJPEG_STATUS_ARCH_MISMATCH = 7,
  NVJPEG_STATUS_INTERNAL_ERROR = 8,
  NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED = 9,
  NVJPEG_STATUS_INCOMPLETE_BITSTREAM = 10,
};

enum nvjpegBackend_t : int {
  NVJPEG_BACKEND_DEFAULT = 0,
  NVJPEG_BACKEND_HYBRID = 1,
  NVJPEG_BACKEND_GPU_HYBRID = 2,
  NVJPEG_BACKEND_HARDWARE = 3,
};

enum nvjpegOutputFormat_t : int {
  NVJPEG_OUTPUT_UNCHANGED = 0,
  NVJPEG_OUTPUT_YUV = 1,
  NVJPEG_OUTPUT_Y = 2,
  NVJPEG_OUTPUT_RGB = 3,
  NVJPEG_OUTPUT_BGR = 4,
  NVJPEG_OUTPUT_RGBI = 5,
  NVJPEG_OUTPUT_BGRI = 6,
};

enum nvjpegJpegEncoding_t : int {
  NVJPEG_ENCODING_UNKNOWN = 0x0,
  NVJPEG_ENCODING_BASELINE_DCT = 0xc0,
  NVJPEG_ENCODING_EXTENDED_SEQUENTIAL_DCT_HUFFMAN = 0xc1,
  NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN = 0xc2,
};

inline constexpr int kNvjpegMaxComponent = 4;  // NVJPEG_MAX_COMPONENT
inline constexpr int kLibraryMajorVersion = 0;  // libraryPropertyType MAJOR_VERSION
inline constexpr int kLibraryMinorVersion = 1;  // MINOR_VERSION
inline constexpr int kLibraryPatchLevel = 2;    // PATCH_LEVEL

struct nvjpegImage_t {
  unsigned char* channel[kNvjpegMaxComponent];
  size_t pitch[kNvjpegMaxComponent];
};

// Stream-ordered allocators with a context (the "V2" interface): return 0 on success.
using tDevMallocV2 = int (*)(void* ctx, void** ptr, size_t size, cudaStream_t stream);
using tDevFreeV2 = int (*)(void* ctx, void* ptr, size_t size, cudaStream_t stream);
using tPinnedMallocV2 = int (*)(void* ctx, void** ptr, size_t size, cudaStream_t stream);
using tPinnedFreeV2 = int (*)(void* ctx, void* ptr, size_t size, cudaStream_t stream);

struct nvjpegDevAllocatorV2_t {
  tDevMallocV2 dev_malloc;
  tDevFreeV2 dev_free;
  void* dev_ctx;
};
struct nvjpegPinnedAllocatorV2_t {
  tPinnedMallocV2 pinned_malloc;
  tPinnedFreeV2 pinned_free;
  void* pinned_ctx;
};

// Opaque handles.
using nvjpegHandle_t = struct nvjpegHandle*;
using nvjpegJpegState_t = struct nvjpegJpegState*;
using nvjpegJpegDecoder_t = struct nvjpegJpegDecoder*;
using nvjpegJpegStream_t = struct nvjpegJpegStream*;
using nvjpegDecodeParams_t = struct nvjpegDecodeParams*;
using nvjpegBufferPinned_t = struct nvjpegBufferPinned*;
using nvjpegBufferDevice_t = struct nvjpegBufferDevice*;

static_assert(sizeof(nvjpegStatus_t) == sizeof(int) && sizeof(nvjpegBackend_t) == sizeof(int) &&
                  sizeof(nvjpegOutputFormat_t) == sizeof(int) && sizeof(nvjpegJpegEncoding_t) == sizeof(int),
              "nvJPEG enums are C ints");
static_assert(sizeof(nvjpegImage_t) == 4 * sizeof(void*) + 4 * sizeof(size_t), "nvjpegImage_t: 4 pointers + 4 pitches");
static_assert(offsetof(nvjpegImage_t, pitch) == 4 * sizeof(void*));
static_assert(sizeof(nvjpegDevAllocatorV2_t) == 3 * sizeof(void*));
static_assert(sizeof(nvjpegPinnedAllocatorV2_t) == 3 * sizeof(void*));

// The entry points: X(name, parameter list). Every one returns nvjpegStatus_t.
#define CONVEYOR_NVJPEG_REQUIRED_FUNCTIONS(X)                                                            \
  X(nvjpegGetProperty, (int type, int* value))                                                            \
  X(nvjpegCreateExV2, (nvjpegBackend_t backend, nvjpegDevAllocatorV2_t* dev_allocator,                    \
                       nvjpegPinnedAllocatorV2_t* pinned_allocator, unsigned int flags, nvjpegHandle_t* handle)) \
  X(nvjpegDestroy, (nvjpegHandle_t handle))                                                               \
  X(nvjpegJpegStateCreate, (nvjpegHandle_t handle, nvjpegJpegState_t* state))                             \
  X(nvjpegJpegStateDestroy, (nvjpegJpegState_t state))                                                    \
  X(nvjpegDecoderCreate, (nvjpegHandle_t handle, nvjpegBackend_t backend, nvjpegJpegDecoder_t* decoder))  \
  X(nvjpegDecoderDestroy, (nvjpegJpegDecoder_t decoder))                                                  \
  X(nvjpegDecoderStateCreate, (nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder, nvjpegJpegState_t* state)) \
  X(nvjpegDecoderJpegSupported, (nvjpegJpegDecoder_t decoder, nvjpegJpegStream_t stream,                  \
                                 nvjpegDecodeParams_t params, int* is_supported))                         \
  X(nvjpegJpegStreamCreate, (nvjpegHandle_t handle, nvjpegJpegStream_t* stream))                          \
  X(nvjpegJpegStreamDestroy, (nvjpegJpegStream_t stream))                                                 \
  X(nvjpegJpegStreamParse, (nvjpegHandle_t handle, const unsigned char* data, size_t length,              \
                            int save_metadata, int save_stream, nvjpegJpegStream_t stream))               \
  X(nvjpegJpegStreamParseHeader, (nvjpegHandle_t handle, const unsigned char* data, size_t length,        \
                                  nvjpegJpegStream_t stream))                                             \
  X(nvjpegJpegStreamGetJpegEncoding, (nvjpegJpegStream_t stream, nvjpegJpegEncoding_t* encoding))         \
  X(nvjpegDecodeParamsCreate, (nvjpegHandle_t handle, nvjpegDecodeParams_t* params))                      \
  X(nvjpegDecodeParamsDestroy, (nvjpegDecodeParams_t params))                                             \
  X(nvjpegDecodeParamsSetOutputFormat, (nvjpegDecodeParams_t params, nvjpegOutputFormat_t format))        \
  X(nvjpegDecodeParamsSetROI, (nvjpegDecodeParams_t params, int offset_x, int offset_y, int width, int height)) \
  X(nvjpegBufferPinnedCreateV2, (nvjpegHandle_t handle, nvjpegPinnedAllocatorV2_t* allocator,             \
                                 nvjpegBufferPinned_t* buffer))                                           \
  X(nvjpegBufferPinnedDestroy, (nvjpegBufferPinned_t buffer))                                             \
  X(nvjpegBufferDeviceCreateV2, (nvjpegHandle_t handle, nvjpegDevAllocatorV2_t* allocator,                \
                                 nvjpegBufferDevice_t* buffer))                                           \
  X(nvjpegBufferDeviceDestroy, (nvjpegBufferDevice_t buffer))                                             \
  X(nvjpegStateAttachPinnedBuffer, (nvjpegJpegState_t state, nvjpegBufferPinned_t buffer))                \
  X(nvjpegStateAttachDeviceBuffer, (nvjpegJpegState_t state, nvjpegBufferDevice_t buffer))                \
  X(nvjpegDecodeJpegHost, (nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder, nvjpegJpegState_t state,   \
                           nvjpegDecodeParams_t params, nvjpegJpegStream_t stream))                       \
  X(nvjpegDecodeJpegTransferToDevice, (nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder,                \
                                       nvjpegJpegState_t state, nvjpegJpegStream_t stream,                \
                                       cudaStream_t cuda_stream))                                         \
  X(nvjpegDecodeJpegDevice, (nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder, nvjpegJpegState_t state, \
                             nvjpegImage_t* destination, cudaStream_t cuda_stream))                       \
  X(nvjpegDecodeBatchedInitialize, (nvjpegHandle_t handle, nvjpegJpegState_t state, int batch_size,       \
                                    int max_cpu_threads, nvjpegOutputFormat_t format))                    \
  X(nvjpegDecodeBatched, (nvjpegHandle_t handle, nvjpegJpegState_t state, const unsigned char* const* data, \
                          const size_t* lengths, nvjpegImage_t* destinations, cudaStream_t cuda_stream))  \
  X(nvjpegDecodeBatchedSupported, (nvjpegHandle_t handle, nvjpegJpegStream_t stream, int* is_supported))

// Newer entry points: a library without them still decodes, without ROI on the engines,
// without the engine count and without preallocating the engines' buffers.
// (nvjpegDecodeBatchedPreAllocate's chroma_subsampling is nvjpegChromaSubsampling_t, a C enum:
// NVJPEG_CSS_444 = 0.)
#define CONVEYOR_NVJPEG_OPTIONAL_FUNCTIONS(X)                                                            \
  X(nvjpegDecodeBatchedEx, (nvjpegHandle_t handle, nvjpegJpegState_t state, const unsigned char* const* data, \
                            const size_t* lengths, nvjpegImage_t* destinations,                           \
                            nvjpegDecodeParams_t* params, cudaStream_t cuda_stream))                      \
  X(nvjpegDecodeBatchedSupportedEx, (nvjpegHandle_t handle, nvjpegJpegStream_t stream,                    \
                                     nvjpegDecodeParams_t params, int* is_supported))                     \
  X(nvjpegGetHardwareDecoderInfo, (nvjpegHandle_t handle, unsigned int* num_engines,                      \
                                   unsigned int* num_cores_per_engine))                                   \
  X(nvjpegDecodeBatchedPreAllocate, (nvjpegHandle_t handle, nvjpegJpegState_t state, int batch_size,      \
                                     int width, int height, int chroma_subsampling,                       \
                                     nvjpegOutputFormat_t format))

// The function table the loader fills. Optional members may be null.
struct NvjpegApi {
#define CONVEYOR_NVJPEG_MEMBER(name, params) nvjpegStatus_t(*name) params = nullptr;
  CONVEYOR_NVJPEG_REQUIRED_FUNCTIONS(CONVEYOR_NVJPEG_MEMBER)
  CONVEYOR_NVJPEG_OPTIONAL_FUNCTIONS(CONVEYOR_NVJPEG_MEMBER)
#undef CONVEYOR_NVJPEG_MEMBER
};

// "NVJPEG_STATUS_BAD_JPEG"; "nvjpegStatus_t(42)" for values the documentation does not list.
const char* StatusName(nvjpegStatus_t status);

}  // namespace conveyor::nvjpeg
