// Our own declarations of the DLPack 1.x C ABI (written from the specification, not copied from
// dlpack.h), so Conveyor builds without a third-party header and can never silently drift from
// the layout other libraries expect: every size and offset below is checked at compile time.
//
// The names follow the specification so that code reads like the spec; they live in
// conveyor::dlpack so a translation unit may also include the real dlpack.h without clashing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace conveyor::dlpack {

// The DLPack version Conveyor speaks. Importers accept any minor version of this major version.
inline constexpr uint32_t kMajorVersion = 1;
inline constexpr uint32_t kMinorVersion = 1;

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

// The C enum is int32-sized in every ABI DLPack targets.
enum DLDeviceType : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  // page-locked host memory, usable by CUDA
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
};

struct DLDevice {
  DLDeviceType device_type;
  int32_t device_id;  // 0 for CPU, CUDAHost and CUDAManaged
};

enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,  // bits == 8
};

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

// `data + byte_offset` is the first element; shape and strides are in elements. strides == NULL
// (allowed before DLPack 1.2) means compact row-major.
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};

// Legacy (pre-1.0) managed tensor: no version, no flags.
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  // May be NULL. When present it frees the whole struct; call it exactly once.
  void (*deleter)(DLManagedTensor* self);
};

inline constexpr uint64_t kDLPackFlagBitmaskReadOnly = 1ull << 0;
inline constexpr uint64_t kDLPackFlagBitmaskIsCopied = 1ull << 1;
inline constexpr uint64_t kDLPackFlagBitmaskIsSubbyteTypePadded = 1ull << 2;

struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  // May be NULL. When present it frees the whole struct; call it exactly once.
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

// Python capsule names (DLPack Python specification).
inline constexpr const char kCapsuleName[] = "dltensor";
inline constexpr const char kUsedCapsuleName[] = "used_dltensor";
inline constexpr const char kVersionedCapsuleName[] = "dltensor_versioned";
inline constexpr const char kUsedVersionedCapsuleName[] = "used_dltensor_versioned";

// The layout every DLPack 1.x producer and consumer shares (LP64).
static_assert(sizeof(DLPackVersion) == 8);
static_assert(sizeof(DLDeviceType) == 4);
static_assert(sizeof(DLDevice) == 8 && offsetof(DLDevice, device_id) == 4);
static_assert(sizeof(DLDataType) == 4 && offsetof(DLDataType, bits) == 1 &&
              offsetof(DLDataType, lanes) == 2);
static_assert(offsetof(DLTensor, data) == 0);
static_assert(offsetof(DLTensor, device) == 8);
static_assert(offsetof(DLTensor, ndim) == 16);
static_assert(offsetof(DLTensor, dtype) == 20);
static_assert(offsetof(DLTensor, shape) == 24);
static_assert(offsetof(DLTensor, strides) == 32);
static_assert(offsetof(DLTensor, byte_offset) == 40);
static_assert(sizeof(DLTensor) == 48);
static_assert(offsetof(DLManagedTensor, dl_tensor) == 0);
static_assert(offsetof(DLManagedTensor, manager_ctx) == 48);
static_assert(offsetof(DLManagedTensor, deleter) == 56);
static_assert(sizeof(DLManagedTensor) == 64);
static_assert(offsetof(DLManagedTensorVersioned, version) == 0);
static_assert(offsetof(DLManagedTensorVersioned, manager_ctx) == 8);
static_assert(offsetof(DLManagedTensorVersioned, deleter) == 16);
static_assert(offsetof(DLManagedTensorVersioned, flags) == 24);
static_assert(offsetof(DLManagedTensorVersioned, dl_tensor) == 32);
static_assert(sizeof(DLManagedTensorVersioned) == 80);

}  // namespace conveyor::dlpack
