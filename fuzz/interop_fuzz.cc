// libFuzzer target: DLPack (versioned and legacy) and CUDA Array Interface import validation on
// arbitrary field values: versions, flags, device types and ids, dtypes, ndim, shapes, strides,
// byte offsets, typestr, mask, stream. No GPU: CPU/pinned/managed/device memory is described, never
// touched (a successful import only wraps the pointer).
//
// Contract checked: every import either returns a tensor whose shape and dtype are the ones given,
// or throws a conveyor::Error; the producer's deleter / release is called exactly once either way
// (after the tensor is gone on success).
//
// | first byte | what the rest builds                                       |
// |------------|------------------------------------------------------------|
// | 0          | DLManagedTensorVersioned                                   |
// | 1          | DLManagedTensor (legacy)                                   |
// | 2          | CudaArrayInterface with a given CaiMemory (no CUDA look-up) |
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/error.h"
#include "core/interop/cuda_array_interface.h"
#include "core/interop/dlpack.h"

namespace {

namespace dl = conveyor::dlpack;
using conveyor::interop::AnyTensor;

alignas(64) char g_memory[4096];  // what data pointers point into (never read by an import)
int g_deleted = 0;

template <typename Managed>
void Delete(Managed*) { ++g_deleted; }

// ndim mostly near the valid range, sometimes anything; the arrays always hold kArray entries, so
// a producer's ndim up to kArray is honest and a larger one is caught before the arrays are read.
constexpr int kArray = 16;

void FillTensor(FuzzedDataProvider& in, dl::DLTensor& t, int64_t (&shape)[kArray], int64_t (&strides)[kArray]) {
  t.device.device_type = static_cast<dl::DLDeviceType>(
      in.ConsumeBool() ? in.ConsumeIntegralInRange<int32_t>(0, 16) : in.ConsumeIntegral<int32_t>());
  t.device.device_id = in.ConsumeIntegralInRange<int32_t>(-2, 8);
  t.dtype.code = in.ConsumeIntegral<uint8_t>();
  t.dtype.bits = in.ConsumeIntegral<uint8_t>();
  t.dtype.lanes = in.ConsumeBool() ? 1 : in.ConsumeIntegral<uint16_t>();
  t.ndim = in.ConsumeBool() ? in.ConsumeIntegralInRange<int32_t>(-1, kArray) : in.ConsumeIntegral<int32_t>();
  for (int i = 0; i < kArray; ++i) {
    shape[i] = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-1, 40) : in.ConsumeIntegral<int64_t>();
  }
  const bool has_strides = in.ConsumeBool();
  for (int i = 0; i < kArray; ++i) {
    strides[i] = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-64, 64) : in.ConsumeIntegral<int64_t>();
  }
  t.shape = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? nullptr : shape;
  t.strides = has_strides ? strides : nullptr;
  t.byte_offset = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 2048) : in.ConsumeIntegral<uint64_t>();
  t.data = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? nullptr : g_memory + 1024;
}

void CheckImported(const AnyTensor& tensor, const dl::DLTensor& t) {
  const conveyor::Shape& shape = std::visit([](const auto& x) -> const conveyor::Shape& { return x.shape(); }, tensor);
  if (shape.ndim() != t.ndim) __builtin_trap();
  for (int i = 0; i < t.ndim; ++i) {
    if (shape[i] != t.shape[i] || shape[i] < 0) __builtin_trap();
  }
}

template <typename Managed>
void ImportDl(FuzzedDataProvider& in, Managed& m) {
  int64_t shape[kArray], strides[kArray];
  FillTensor(in, m.dl_tensor, shape, strides);
  m.manager_ctx = nullptr;
  m.deleter = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? nullptr : &Delete<Managed>;
  const bool counted = m.deleter != nullptr;
  g_deleted = 0;
  try {
    const AnyTensor tensor = conveyor::interop::ImportDLPack(&m);
    CheckImported(tensor, m.dl_tensor);
    if (g_deleted != 0) __builtin_trap();  // still held by the tensor
  } catch (const conveyor::Error&) {
  }
  if (counted && g_deleted != 1) __builtin_trap();
}

void ImportCai(FuzzedDataProvider& in) {
  conveyor::interop::CudaArrayInterface cai;
  const int ndim = in.ConsumeIntegralInRange<int>(0, 10);
  for (int i = 0; i < ndim; ++i) {
    cai.shape.push_back(in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-1, 40) : in.ConsumeIntegral<int64_t>());
  }
  if (in.ConsumeBool()) {
    const int n = in.ConsumeBool() ? ndim : in.ConsumeIntegralInRange<int>(0, 10);
    std::vector<int64_t> s;
    for (int i = 0; i < n; ++i) {
      s.push_back(in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-64, 64) : in.ConsumeIntegral<int64_t>());
    }
    cai.strides = std::move(s);
  }
  cai.data = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? 0 : reinterpret_cast<uintptr_t>(g_memory + 1024);
  if (in.ConsumeBool()) cai.data += in.ConsumeIntegral<uint16_t>();
  cai.read_only = in.ConsumeBool();
  cai.version = in.ConsumeIntegralInRange<int64_t>(0, 5);
  cai.has_mask = in.ConsumeIntegralInRange<int>(0, 7) == 0;
  // A positive stream is a cudaStream_t the importer records an event on: only None and the
  // values refused before any CUDA call (0, negative) are fuzzed here.
  if (in.ConsumeBool()) cai.stream = -in.ConsumeIntegralInRange<int64_t>(0, 3);
  conveyor::interop::CaiMemory memory;
  memory.kind = static_cast<conveyor::MemoryKind>(in.ConsumeIntegralInRange<int>(1, 3));
  memory.device = in.ConsumeIntegralInRange<int>(-1, 3);
  cai.typestr = in.ConsumeRandomLengthString(8);
  g_deleted = 0;
  try {
    const conveyor::TensorGPU t = conveyor::interop::ImportCudaArrayInterface(cai, [] { ++g_deleted; }, memory);
    if (t.shape().ndim() != static_cast<int>(cai.shape.size())) __builtin_trap();
    for (size_t i = 0; i < cai.shape.size(); ++i) {
      if (t.shape()[static_cast<int>(i)] != cai.shape[i]) __builtin_trap();
    }
    if (g_deleted != 0) __builtin_trap();
  } catch (const conveyor::Error&) {
  }
  if (g_deleted != 1) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: {
      dl::DLManagedTensorVersioned m{};
      m.version.major = in.ConsumeBool() ? dl::kMajorVersion : in.ConsumeIntegral<uint32_t>();
      m.version.minor = in.ConsumeIntegral<uint32_t>();
      m.flags = in.ConsumeIntegral<uint64_t>();
      ImportDl(in, m);
      break;
    }
    case 1: {
      dl::DLManagedTensor m{};
      ImportDl(in, m);
      break;
    }
    default: ImportCai(in);
  }
  return 0;
}
