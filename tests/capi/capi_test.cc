// The C API's contracts that need no GPU: status codes, thread-local messages, ownership on
// failure, tensor queries, DLPack round trips on the host, and the shared library's exports.
#include "core/capi/conveyor.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/capi/shared_library.h"
#include "tests/core/interop/dlpack_producer.h"
#include "tests/util/gpu_test.h"

namespace conveyor::capi {
namespace {

using ::testing::HasSubstr;
using interop::testing::DLPackProducer;

DLManagedTensorVersioned* C(dlpack::DLManagedTensorVersioned* m) {
  return reinterpret_cast<DLManagedTensorVersioned*>(m);
}
DLManagedTensor* C(dlpack::DLManagedTensor* m) { return reinterpret_cast<DLManagedTensor*>(m); }
dlpack::DLManagedTensorVersioned* Ours(DLManagedTensorVersioned* m) {
  return reinterpret_cast<dlpack::DLManagedTensorVersioned*>(m);
}

// Owns a handle so a failing ASSERT does not leak it.
struct Handle {
  conveyor_tensor_t t = nullptr;
  ~Handle() { conveyor_tensor_release(t); }
};

conveyor_tensor_info_t Info(conveyor_tensor_t t) {
  conveyor_tensor_info_t info{};
  EXPECT_EQ(conveyor_tensor_info(t, &info), CONVEYOR_OK) << conveyor_last_error();
  return info;
}

TEST(CApi, AbiVersionAndNames) {
  EXPECT_EQ(conveyor_abi_version(), static_cast<uint32_t>(CONVEYOR_ABI_VERSION));
  EXPECT_STREQ(conveyor_status_name(CONVEYOR_OK), "CONVEYOR_OK");
  EXPECT_STREQ(conveyor_status_name(CONVEYOR_ERROR_INTEROP), "CONVEYOR_ERROR_INTEROP");
  EXPECT_STREQ(conveyor_status_name(static_cast<conveyor_status_t>(42)), "unknown status");
  EXPECT_STREQ(conveyor_dtype_name(CONVEYOR_DTYPE_BFLOAT16), "bfloat16");
  EXPECT_STREQ(conveyor_dtype_name(CONVEYOR_DTYPE_BOOL), "bool");
  EXPECT_EQ(conveyor_dtype_name(static_cast<conveyor_dtype_t>(11)), nullptr);
}

TEST(CApi, ImportsVersionedDLPackAndReleasesOnce) {
  std::vector<float> data = conveyor::testing::RandomVector<float>(12, -1.f, 1.f);
  DLPackProducer p;
  p.data = data.data();
  p.shape = {3, 4};
  p.flags = dlpack::kDLPackFlagBitmaskReadOnly;
  conveyor_tensor_t t = nullptr;
  ASSERT_EQ(conveyor_tensor_from_dlpack_versioned(C(p.Versioned()), -1, &t), CONVEYOR_OK) << conveyor_last_error();
  const conveyor_tensor_info_t info = Info(t);
  EXPECT_EQ(info.ndim, 2);
  EXPECT_EQ(info.shape[0], 3);
  EXPECT_EQ(info.shape[1], 4);
  EXPECT_EQ(info.strides[0], 4);
  EXPECT_EQ(info.strides[1], 1);
  EXPECT_EQ(info.dtype, CONVEYOR_DTYPE_FLOAT32);
  EXPECT_EQ(info.device_type, CONVEYOR_DEVICE_CPU);
  EXPECT_EQ(info.device_id, 0);
  EXPECT_EQ(info.data, data.data());
  EXPECT_EQ(info.read_only, 1);
  EXPECT_EQ(p.deleter_calls, 0);
  conveyor_tensor_release(t);
  EXPECT_EQ(p.deleter_calls, 1);
}

TEST(CApi, ImportsLegacyDLPack) {
  std::vector<int16_t> data(6, 3);
  DLPackProducer p;
  p.data = data.data();
  p.dtype = {dlpack::kDLInt, 16, 1};
  p.shape = {6};
  Handle h;
  ASSERT_EQ(conveyor_tensor_from_dlpack(C(p.Legacy()), -1, &h.t), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_EQ(Info(h.t).dtype, CONVEYOR_DTYPE_INT16);
  EXPECT_EQ(Info(h.t).read_only, 0);
}

TEST(CApi, FailedImportRunsTheDeleterAndSaysWhere) {
  float x = 0;
  DLPackProducer p;
  p.data = &x;
  p.shape = {1};
  p.device = {dlpack::kDLOpenCL, 0};
  conveyor_tensor_t t = nullptr;
  EXPECT_EQ(conveyor_tensor_from_dlpack_versioned(C(p.Versioned()), -1, &t), CONVEYOR_ERROR_INTEROP);
  EXPECT_EQ(t, nullptr) << "out parameters are written only on success";
  EXPECT_EQ(p.deleter_calls, 1);
  EXPECT_THAT(conveyor_last_error(),
              HasSubstr("conveyor_tensor_from_dlpack_versioned: DLPack import (DLManagedTensorVersioned): "
                        "dl_tensor.device.device_type: expected kDLCPU (1), kDLCUDA (2), kDLCUDAHost (3) or "
                        "kDLCUDAManaged (13), got 4 (kDLOpenCL)"));

  p.device = {dlpack::kDLCPU, 0};
  EXPECT_EQ(conveyor_tensor_from_dlpack(C(p.Legacy()), -1, nullptr), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(p.deleter_calls, 2) << "ownership passed even though `out` was NULL";
  EXPECT_THAT(conveyor_last_error(), HasSubstr("conveyor_tensor_from_dlpack: out: expected a non-NULL pointer, got NULL"));

  p.version = {3, 1};
  EXPECT_EQ(conveyor_tensor_from_dlpack_versioned(C(p.Versioned()), -1, &t), CONVEYOR_ERROR_INTEROP);
  EXPECT_EQ(p.deleter_calls, 3);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("version: expected major version 1 (any minor), got 3.1"));
}

TEST(CApi, LastErrorIsPerThreadAndKeptBySuccessfulCalls) {
  conveyor_tensor_t t = nullptr;
  ASSERT_NE(conveyor_tensor_empty(1, nullptr, CONVEYOR_DTYPE_FLOAT32, CONVEYOR_DEVICE_CPU, 0, -1, &t), CONVEYOR_OK);
  const std::string mine = conveyor_last_error();
  EXPECT_THAT(mine, HasSubstr("conveyor_tensor_empty: shape: expected a non-NULL pointer, got NULL"));
  std::thread([] {
    EXPECT_STREQ(conveyor_last_error(), "");
    conveyor_tensor_t other = nullptr;
    EXPECT_EQ(conveyor_tensor_empty(-1, nullptr, CONVEYOR_DTYPE_FLOAT32, CONVEYOR_DEVICE_CPU, 0, -1, &other),
              CONVEYOR_ERROR_INVALID_ARGUMENT);
    EXPECT_THAT(conveyor_last_error(), HasSubstr("ndim: expected 0 to 8, got -1"));
  }).join();
  EXPECT_EQ(conveyor_last_error(), mine);
  Handle ok;
  const int64_t shape[] = {2};
  ASSERT_EQ(conveyor_tensor_empty(1, shape, CONVEYOR_DTYPE_UINT8, CONVEYOR_DEVICE_CPU, 0, -1, &ok.t), CONVEYOR_OK);
  EXPECT_EQ(conveyor_last_error(), mine);
}

TEST(CApi, EmptyValidatesItsArguments) {
  const int64_t shape[] = {2, 3};
  conveyor_tensor_t t = nullptr;
  EXPECT_EQ(conveyor_tensor_empty(2, shape, static_cast<conveyor_dtype_t>(99), CONVEYOR_DEVICE_CPU, 0, -1, &t),
            CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("dtype: expected a conveyor_dtype_t (0 to 10), got 99"));
  EXPECT_EQ(conveyor_tensor_empty(2, shape, CONVEYOR_DTYPE_FLOAT32, 7, 0, -1, &t), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("device_type: expected CONVEYOR_DEVICE_CPU (1), _CUDA (2), "
                                               "_CUDA_HOST (3) or _CUDA_MANAGED (13), got 7"));
  const int64_t negative[] = {2, -3};
  EXPECT_EQ(conveyor_tensor_empty(2, negative, CONVEYOR_DTYPE_FLOAT32, CONVEYOR_DEVICE_CPU, 0, -1, &t),
            CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("shape: expected extents >= 0, got (2, -3)"));
  EXPECT_EQ(conveyor_tensor_empty(2, shape, CONVEYOR_DTYPE_FLOAT32, CONVEYOR_DEVICE_CPU, 0, 0, &t),
            CONVEYOR_ERROR_INTEROP);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("got 0"));
  EXPECT_EQ(t, nullptr);
}

TEST(CApi, HostTensorRoundTripsThroughBothDLPackKinds) {
  const int64_t shape[] = {4, 5};
  Handle h;
  ASSERT_EQ(conveyor_tensor_empty(2, shape, CONVEYOR_DTYPE_FLOAT64, CONVEYOR_DEVICE_CPU, 0, -1, &h.t), CONVEYOR_OK);
  const conveyor_tensor_info_t info = Info(h.t);
  EXPECT_EQ(info.strides[0], 5);
  EXPECT_EQ(info.read_only, 0);

  DLManagedTensorVersioned* v = nullptr;
  ASSERT_EQ(conveyor_tensor_to_dlpack_versioned(h.t, -1, &v), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_EQ(Ours(v)->version.major, 1u);
  EXPECT_EQ(Ours(v)->dl_tensor.data, info.data);
  EXPECT_EQ(Ours(v)->dl_tensor.device.device_type, dlpack::kDLCPU);
  ASSERT_NE(Ours(v)->dl_tensor.strides, nullptr);
  Handle back;
  ASSERT_EQ(conveyor_tensor_from_dlpack_versioned(v, -1, &back.t), CONVEYOR_OK);
  EXPECT_EQ(Info(back.t).data, info.data);

  DLManagedTensor* l = nullptr;
  ASSERT_EQ(conveyor_tensor_to_dlpack(h.t, -1, &l), CONVEYOR_OK) << conveyor_last_error();
  conveyor_dlpack_delete(l);
  conveyor_dlpack_delete(nullptr);
  conveyor_dlpack_versioned_delete(nullptr);
}

TEST(CApi, ExportRejectsStreamZeroAndLegacyReadOnly) {
  std::vector<float> data(4, 1.f);
  DLPackProducer p;
  p.data = data.data();
  p.shape = {4};
  p.flags = dlpack::kDLPackFlagBitmaskReadOnly;
  Handle h;
  ASSERT_EQ(conveyor_tensor_from_dlpack_versioned(C(p.Versioned()), -1, &h.t), CONVEYOR_OK);
  DLManagedTensorVersioned* v = nullptr;
  EXPECT_EQ(conveyor_tensor_to_dlpack_versioned(h.t, 0, &v), CONVEYOR_ERROR_INTEROP);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("conveyor_tensor_to_dlpack_versioned: stream: expected -1 (no sync)"));
  DLManagedTensor* l = nullptr;
  EXPECT_EQ(conveyor_tensor_to_dlpack(h.t, -1, &l), CONVEYOR_ERROR_INTEROP);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("expected a writable tensor, got a read-only one"));
  EXPECT_EQ(l, nullptr);
}

TEST(CApi, CaiOfPageableMemoryIsRefused) {
  const int64_t shape[] = {3};
  Handle h;
  ASSERT_EQ(conveyor_tensor_empty(1, shape, CONVEYOR_DTYPE_FLOAT32, CONVEYOR_DEVICE_CPU, 0, -1, &h.t), CONVEYOR_OK);
  conveyor_cai_t cai{};
  EXPECT_EQ(conveyor_tensor_to_cai(h.t, -1, &cai), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("got pageable host memory"));
}

// Release callbacks must run exactly once, also when the import fails before it starts.
struct ReleaseCounter {
  int calls = 0;
  static void Release(void* self) { ++static_cast<ReleaseCounter*>(self)->calls; }
};

TEST(CApi, CaiImportErrorsReleaseOnce) {
  const int64_t shape[] = {4};
  float x[4] = {};
  conveyor_cai_t cai{};
  cai.version = 3;
  cai.ndim = 1;
  cai.shape = shape;
  cai.typestr = "<f4";
  cai.data = reinterpret_cast<uintptr_t>(x);
  cai.has_mask = 1;
  ReleaseCounter counter;
  conveyor_tensor_t t = nullptr;
  EXPECT_EQ(conveyor_tensor_from_cai(&cai, &ReleaseCounter::Release, &counter, &t), CONVEYOR_ERROR_INTEROP);
  EXPECT_THAT(conveyor_last_error(),
              HasSubstr("conveyor_tensor_from_cai: CUDA Array Interface import: field \"mask\": expected None or absent"));
  EXPECT_EQ(counter.calls, 1);

  cai.has_mask = 0;
  cai.has_stream = 1;
  cai.stream = 0;
  EXPECT_EQ(conveyor_tensor_from_cai(&cai, &ReleaseCounter::Release, &counter, &t), CONVEYOR_ERROR_INTEROP);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("field \"stream\""));
  EXPECT_EQ(counter.calls, 2);

  cai.has_stream = 0;
  cai.ndim = 9;
  EXPECT_EQ(conveyor_tensor_from_cai(&cai, &ReleaseCounter::Release, &counter, &t), CONVEYOR_ERROR_INTEROP);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("field \"shape\": expected 0 to 8 dimensions, got 9"));
  EXPECT_EQ(counter.calls, 3);

  EXPECT_EQ(conveyor_tensor_from_cai(nullptr, &ReleaseCounter::Release, &counter, &t),
            CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("cai: expected a non-NULL pointer, got NULL"));
  EXPECT_EQ(counter.calls, 4);

  cai.ndim = 1;
  cai.version = 1;
  EXPECT_EQ(conveyor_tensor_from_cai(&cai, nullptr, nullptr, &t), CONVEYOR_ERROR_INTEROP);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("field \"version\": expected 2 or 3, got 1"));
  EXPECT_EQ(t, nullptr);
}

// Device tensors described by hand: the op's argument checks run before any CUDA call.
Handle FakeDeviceTensor(DLPackProducer& p, float* storage, std::vector<int64_t> shape, bool read_only,
                        dlpack::DLDataType dtype = {dlpack::kDLFloat, 32, 1}) {
  p.data = storage;
  p.device = {dlpack::kDLCUDA, 0};
  p.dtype = dtype;
  p.shape = std::move(shape);
  p.flags = read_only ? dlpack::kDLPackFlagBitmaskReadOnly : 0;
  Handle h;
  EXPECT_EQ(conveyor_tensor_from_dlpack_versioned(C(p.Versioned()), -1, &h.t), CONVEYOR_OK) << conveyor_last_error();
  return h;
}

TEST(CApi, ScaleAddChecksItsArguments) {
  float storage[8] = {};
  DLPackProducer pa, pb, pc, pd;
  Handle in = FakeDeviceTensor(pa, storage, {8}, /*read_only=*/true);
  Handle read_only_out = FakeDeviceTensor(pb, storage, {8}, /*read_only=*/true);
  Handle wrong_shape = FakeDeviceTensor(pc, storage, {2, 4}, false);
  Handle wrong_dtype = FakeDeviceTensor(pd, storage, {8}, false, {dlpack::kDLInt, 32, 1});

  EXPECT_EQ(conveyor_scale_add(wrong_shape.t, in.t, 1.f, 0.f, -1), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("conveyor_scale_add: stream: expected a stream, got -1 (none)"));
  EXPECT_EQ(conveyor_scale_add(read_only_out.t, in.t, 1.f, 0.f, 1), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("out: expected a writable tensor, got a read-only one"));
  EXPECT_EQ(conveyor_scale_add(wrong_shape.t, in.t, 1.f, 0.f, 1), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("expected equal shapes, got out (2, 4) and in (8,)"));
  EXPECT_EQ(conveyor_scale_add(wrong_dtype.t, in.t, 1.f, 0.f, 1), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("expected float32 tensors, got out int32 and in float32"));
  EXPECT_EQ(conveyor_scale_add(nullptr, in.t, 1.f, 0.f, 1), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("out: expected a non-NULL pointer, got NULL"));

  const int64_t shape[] = {8};
  Handle host;
  ASSERT_EQ(conveyor_tensor_empty(1, shape, CONVEYOR_DTYPE_FLOAT32, CONVEYOR_DEVICE_CPU, 0, -1, &host.t), CONVEYOR_OK);
  EXPECT_EQ(conveyor_scale_add(wrong_shape.t, host.t, 1.f, 0.f, 1), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("got pageable host memory"));
}

TEST(CApiSharedLibrary, ExportsOnlyTheCApi) {
  std::string tried;
  void* lib = testing::OpenConveyorLibrary(tried);
  ASSERT_EQ(tried.find(" ("), std::string::npos) << "the library exists but does not open:" << tried;
  if (lib == nullptr) GTEST_SKIP() << "libconveyor_c.so is not beside this test; tried" << tried;
  auto* version = reinterpret_cast<uint32_t (*)()>(dlsym(lib, "conveyor_abi_version"));
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(version(), static_cast<uint32_t>(CONVEYOR_ABI_VERSION));
  EXPECT_NE(dlsym(lib, "conveyor_scale_add"), nullptr);
  EXPECT_EQ(dlsym(lib, "cudaMalloc"), nullptr) << "the static cudart must stay private";
  EXPECT_EQ(dlsym(lib, "_ZN8conveyor8interop12ImportDLPackEPNS_6dlpack24DLManagedTensorVersionedE"), nullptr);
  dlclose(lib);
}

}  // namespace
}  // namespace conveyor::capi
