// DLPack import/export rules with hand-built structs (no GPU needed: device pointers are never
// dereferenced here; tests/core/interop/interop_gpu_test.cc moves real data).
#include "core/interop/dlpack.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "tests/core/interop/dlpack_producer.h"
#include "tests/util/gpu_test.h"

namespace conveyor::interop {
namespace {

using ::testing::HasSubstr;
using testing::DLPackProducer;

// Runs every import rule for both managed-tensor kinds.
class DLPackImport : public ::testing::TestWithParam<bool> {
 protected:
  bool versioned() const { return GetParam(); }
  AnyTensor Import(DLPackProducer& p) {
    return versioned() ? ImportDLPack(p.Versioned()) : ImportDLPack(p.Legacy());
  }
  // Imports expecting InteropError; returns its message.
  std::string ImportError(DLPackProducer& p) {
    try {
      Import(p);
    } catch (const InteropError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected InteropError";
    return {};
  }
};

INSTANTIATE_TEST_SUITE_P(Kinds, DLPackImport, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Versioned" : "Legacy"; });

TEST_P(DLPackImport, CpuTensorIsZeroCopyAndDeleterRunsOnceAtLastHolder) {
  std::vector<float> data = conveyor::testing::RandomVector<float>(6, -5.f, 5.f);
  DLPackProducer p;
  p.data = data.data();
  p.shape = {2, 3};
  p.strides = {3, 1};
  {
    AnyTensor any = Import(p);
    ASSERT_TRUE(std::holds_alternative<TensorCPU>(any));
    TensorCPU t = std::get<TensorCPU>(any);
    EXPECT_EQ(t.shape(), Shape({2, 3}));
    EXPECT_EQ(t.strides(), Shape({3, 1}));
    EXPECT_EQ(t.dtype(), DType::kFloat32);
    EXPECT_EQ(t.memory_kind(), MemoryKind::kHost);
    EXPECT_EQ(t.data<float>(), data.data());
    EXPECT_FALSE(t.read_only());
    TensorCPU copy = t;
    any = TensorCPU();
    t = TensorCPU();
    EXPECT_EQ(p.deleter_calls, 0) << "a copy still holds the Buffer";
    EXPECT_EQ(copy.data<float>()[4], data[4]);
  }
  EXPECT_EQ(p.deleter_calls, 1);
}

TEST_P(DLPackImport, NullStridesMeanRowMajor) {
  std::vector<int32_t> data(24, 7);
  DLPackProducer p;
  p.data = data.data();
  p.dtype = {dlpack::kDLInt, 32, 1};
  p.shape = {2, 3, 4};
  TensorCPU t = std::get<TensorCPU>(Import(p));
  EXPECT_EQ(t.strides(), Shape({12, 4, 1}));
  EXPECT_TRUE(t.is_contiguous());
}

TEST_P(DLPackImport, HonoursByteOffsetAndStrides) {
  std::vector<float> data = conveyor::testing::RandomVector<float>(32, -1.f, 1.f);
  DLPackProducer p;
  p.data = data.data();
  p.byte_offset = 4 * sizeof(float);
  p.shape = {3, 2};
  p.strides = {1, 5};  // a transposed view
  TensorCPU t = std::get<TensorCPU>(Import(p));
  EXPECT_EQ(t.raw_data(), data.data() + 4);
  EXPECT_EQ(t.strides(), Shape({1, 5}));
  EXPECT_FALSE(t.is_contiguous());
  const float* base = t.data<float>();
  EXPECT_EQ(base[2 * 1 + 1 * 5], data[4 + 2 + 5]);
}

TEST_P(DLPackImport, NegativeStridesStayInsideTheWrappedBuffer) {
  std::vector<float> data = conveyor::testing::RandomVector<float>(4, -1.f, 1.f);
  DLPackProducer p;
  p.data = data.data();
  p.byte_offset = 3 * sizeof(float);  // first element is the last in memory
  p.shape = {4};
  p.strides = {-1};
  TensorCPU t = std::get<TensorCPU>(Import(p));
  EXPECT_EQ(t.raw_data(), data.data() + 3);
  EXPECT_EQ(t.buffer().data(), data.data());
  EXPECT_EQ(t.buffer().size(), 4 * sizeof(float));
  EXPECT_EQ(t.strides(), Shape({-1}));
}

TEST_P(DLPackImport, MapsEveryDTypeCode) {
  struct Case {
    dlpack::DLDataType dl;
    DType want;
  };
  const Case cases[] = {
      {{dlpack::kDLBool, 8, 1}, DType::kBool},       {{dlpack::kDLUInt, 8, 1}, DType::kUInt8},
      {{dlpack::kDLInt, 8, 1}, DType::kInt8},        {{dlpack::kDLUInt, 16, 1}, DType::kUInt16},
      {{dlpack::kDLInt, 16, 1}, DType::kInt16},      {{dlpack::kDLInt, 32, 1}, DType::kInt32},
      {{dlpack::kDLInt, 64, 1}, DType::kInt64},      {{dlpack::kDLFloat, 16, 1}, DType::kFloat16},
      {{dlpack::kDLBfloat, 16, 1}, DType::kBFloat16}, {{dlpack::kDLFloat, 32, 1}, DType::kFloat32},
      {{dlpack::kDLFloat, 64, 1}, DType::kFloat64},
  };
  std::vector<uint64_t> data(4, 1);
  for (const Case& c : cases) {
    DLPackProducer p;
    p.data = data.data();
    p.dtype = c.dl;
    p.shape = {2};
    EXPECT_EQ(Visit(Import(p), [](const auto& t) { return t.dtype(); }), c.want)
        << "code " << int(c.dl.code) << " bits " << int(c.dl.bits);
    EXPECT_EQ(p.deleter_calls, 1);
  }
}

TEST_P(DLPackImport, RejectsUnsupportedDTypeAfterCallingTheDeleter) {
  std::vector<double> data(4, 1.0);
  DLPackProducer p;
  p.data = data.data();
  p.shape = {2};
  p.dtype = {dlpack::kDLComplex, 64, 1};
  std::string message = ImportError(p);
  EXPECT_THAT(message, HasSubstr("dl_tensor.dtype"));
  EXPECT_THAT(message, HasSubstr("got code 5 bits 64 lanes 1"));
  EXPECT_EQ(p.deleter_calls, 1);

  p.dtype = {dlpack::kDLFloat, 32, 4};  // vector lanes
  EXPECT_THAT(ImportError(p), HasSubstr("lanes 4"));
  EXPECT_EQ(p.deleter_calls, 2);
}

TEST_P(DLPackImport, RejectsOtherDeviceTypesByName) {
  int x = 0;
  DLPackProducer p;
  p.data = &x;
  p.shape = {1};
  p.device = {dlpack::kDLROCM, 0};
  const std::string message = ImportError(p);
  EXPECT_THAT(message, HasSubstr("dl_tensor.device.device_type"));
  EXPECT_THAT(message, HasSubstr("expected kDLCPU (1), kDLCUDA (2), kDLCUDAHost (3) or kDLCUDAManaged (13)"));
  EXPECT_THAT(message, HasSubstr("got 10 (kDLROCM)"));
  EXPECT_EQ(p.deleter_calls, 1);
}

TEST_P(DLPackImport, RejectsNegativeCudaDeviceId) {
  float x = 0;
  DLPackProducer p;
  p.data = &x;
  p.shape = {1};
  p.device = {dlpack::kDLCUDA, -3};
  const std::string message = ImportError(p);
  EXPECT_THAT(message, HasSubstr("dl_tensor.device.device_id"));
  EXPECT_THAT(message, HasSubstr("got -3"));
}

TEST_P(DLPackImport, DeviceTypesPickBackendAndMemoryKind) {
  float x = 0;
  DLPackProducer p;
  p.data = &x;  // never dereferenced
  p.shape = {1};

  p.device = {dlpack::kDLCUDA, 0};
  AnyTensor cuda = Import(p);
  ASSERT_TRUE(std::holds_alternative<TensorGPU>(cuda));
  EXPECT_EQ(BufferOf(cuda).kind(), MemoryKind::kDevice);
  EXPECT_EQ(BufferOf(cuda).device(), 0);

  p.device = {dlpack::kDLCUDAManaged, 0};
  AnyTensor managed = Import(p);
  ASSERT_TRUE(std::holds_alternative<TensorGPU>(managed));
  EXPECT_EQ(BufferOf(managed).kind(), MemoryKind::kManaged);

  p.device = {dlpack::kDLCUDAHost, 0};
  AnyTensor pinned = Import(p);
  ASSERT_TRUE(std::holds_alternative<TensorCPU>(pinned));
  EXPECT_EQ(BufferOf(pinned).kind(), MemoryKind::kPinned);
  EXPECT_EQ(std::get<TensorCPU>(pinned).raw_data(), &x);
}

TEST_P(DLPackImport, RejectsBadShapes) {
  float x[4] = {1, 2, 3, 4};
  DLPackProducer p;
  p.data = x;
  p.shape = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  std::string message = ImportError(p);
  EXPECT_THAT(message, HasSubstr("dl_tensor.ndim: expected 0 to 8 dimensions, got 9"));

  p.shape = {2, -1};
  message = ImportError(p);
  EXPECT_THAT(message, HasSubstr("shape[1]: expected an extent >= 0, got -1"));
  EXPECT_EQ(p.deleter_calls, 2);

  // Found by fuzz/interop: extents overflowing int64, and data + byte_offset wrapping around.
  p.shape = {6317785168349535027, 13};
  EXPECT_THAT(ImportError(p), HasSubstr("extents (6317785168349535027, 13) hold more than 2^63 elements"));
  p.shape = {4};
  p.data = reinterpret_cast<void*>(UINTPTR_MAX - 7);  // never dereferenced: the import refuses it
  p.byte_offset = 16;
  EXPECT_THAT(ImportError(p), HasSubstr("dl_tensor.byte_offset: data + byte_offset 16 with shape (4,)"));
  EXPECT_THAT(ImportError(p), HasSubstr("wraps around the address space"));
  p.data = nullptr;
  p.shape = {0};
  p.byte_offset = 1598;  // NULL data is fine for an empty tensor, whatever the offset
  EXPECT_EQ(std::get<TensorCPU>(Import(p)).num_elements(), 0);
  EXPECT_EQ(p.deleter_calls, 6);
}

TEST_P(DLPackImport, RejectsNullShapeWithDimensions) {
  float x = 0;
  DLPackProducer p;
  p.data = &x;
  dlpack::DLManagedTensorVersioned* v = p.Versioned();
  dlpack::DLManagedTensor* l = p.Legacy();
  v->dl_tensor.ndim = l->dl_tensor.ndim = 2;  // but shape stays NULL
  try {
    versioned() ? ImportDLPack(v) : ImportDLPack(l);
    FAIL() << "expected InteropError";
  } catch (const InteropError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dl_tensor.shape: expected 2 extents, got NULL"));
  }
  EXPECT_EQ(p.deleter_calls, 1);
}

TEST_P(DLPackImport, RejectsNullDataUnlessEmpty) {
  DLPackProducer p;
  p.shape = {3};
  EXPECT_THAT(ImportError(p), HasSubstr("dl_tensor.data: expected a pointer for a tensor of shape (3,), got NULL"));

  p.shape = {0, 5};  // zero-size tensors may carry NULL data
  TensorCPU t = std::get<TensorCPU>(Import(p));
  EXPECT_EQ(t.num_elements(), 0);
  EXPECT_EQ(t.shape(), Shape({0, 5}));
}

TEST_P(DLPackImport, ScalarNeedsNoShape) {
  double x = 2.5;
  DLPackProducer p;
  p.data = &x;
  p.dtype = {dlpack::kDLFloat, 64, 1};
  TensorCPU t = std::get<TensorCPU>(Import(p));
  EXPECT_EQ(t.ndim(), 0);
  EXPECT_EQ(*t.data<double>(), 2.5);
}

TEST_P(DLPackImport, NullDeleterIsAccepted) {
  float x = 1;
  DLPackProducer p;
  p.data = &x;
  p.shape = {1};
  p.null_deleter = true;
  EXPECT_NO_THROW(Import(p));
}

TEST(DLPackImportVersioned, ReadOnlyFlagMakesTheTensorReadOnly) {
  std::vector<float> data(4, 3.f);
  DLPackProducer p;
  p.data = data.data();
  p.shape = {4};
  p.flags = dlpack::kDLPackFlagBitmaskReadOnly | dlpack::kDLPackFlagBitmaskIsCopied;
  TensorCPU t = std::get<TensorCPU>(ImportDLPack(p.Versioned()));
  EXPECT_TRUE(t.read_only());
  EXPECT_EQ(t.data<float>()[0], 3.f);
  try {
    t.mutable_data<float>();
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("read-only"));
  }
}

TEST(DLPackImportVersioned, MajorVersionMismatchCallsDeleterAndReadsNothingElse) {
  DLPackProducer p;
  p.version = {2, 0};
  dlpack::DLManagedTensorVersioned* m = p.Versioned();
  // A 2.x struct may have any layout after the version: garbage must not be looked at.
  m->dl_tensor.ndim = 1000;
  m->dl_tensor.shape = reinterpret_cast<int64_t*>(uintptr_t{0x8});
  try {
    ImportDLPack(m);
    FAIL() << "expected InteropError";
  } catch (const InteropError& e) {
    EXPECT_THAT(e.what(), HasSubstr("version: expected major version 1 (any minor), got 2.0"));
    EXPECT_THAT(e.what(), HasSubstr("deleter was called"));
  }
  EXPECT_EQ(p.deleter_calls, 1);

  p.version = {0, 8};
  EXPECT_THROW(ImportDLPack(p.Versioned()), InteropError);
  EXPECT_EQ(p.deleter_calls, 2);
}

TEST(DLPackImportVersioned, OtherMinorVersionsAreFine) {
  float x = 1;
  DLPackProducer p;
  p.data = &x;
  p.shape = {1};
  p.version = {1, 7};
  EXPECT_NO_THROW(ImportDLPack(p.Versioned()));
  EXPECT_EQ(p.deleter_calls, 1);
}

TEST(DLPackImport, NullPointerIsRejected) {
  EXPECT_THAT([] { ImportDLPack(static_cast<dlpack::DLManagedTensorVersioned*>(nullptr)); },
              ::testing::ThrowsMessage<InteropError>(HasSubstr("expected a DLManagedTensorVersioned*, got NULL")));
  EXPECT_THAT([] { ImportDLPack(static_cast<dlpack::DLManagedTensor*>(nullptr)); },
              ::testing::ThrowsMessage<InteropError>(HasSubstr("expected a DLManagedTensor*, got NULL")));
}

// --- export -------------------------------------------------------------------------------------

TensorCPU HostTensor(std::vector<float>& storage, Shape shape) {
  Buffer b = Buffer::Wrap(storage.data(), storage.size() * sizeof(float), MemoryKind::kHost, -1, nullptr);
  return TensorCPU::FromBuffer(b, 0, shape, DType::kFloat32);
}

TEST(DLPackExport, VersionedCarriesEveryFieldAndKeepsTheBufferAlive) {
  std::vector<float> storage = conveyor::testing::RandomVector<float>(12, -1.f, 1.f);
  bool released = false;
  std::shared_ptr<void> owner(nullptr, [&](void*) { released = true; });
  Buffer b = Buffer::Wrap(storage.data(), storage.size() * sizeof(float), MemoryKind::kHost, -1, owner);
  owner.reset();
  TensorCPU t = TensorCPU::FromBuffer(b, 2 * sizeof(float), {2, 5}, DType::kFloat32);
  b = Buffer();

  dlpack::DLManagedTensorVersioned* m = ExportDLPackVersioned(t, std::nullopt);
  t = TensorCPU();
  EXPECT_FALSE(released) << "the exported tensor holds the Buffer";
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->version.minor, dlpack::kMinorVersion);
  EXPECT_EQ(m->flags, 0u);
  const dlpack::DLTensor& dl = m->dl_tensor;
  EXPECT_EQ(dl.device.device_type, dlpack::kDLCPU);
  EXPECT_EQ(dl.device.device_id, 0);
  EXPECT_EQ(dl.data, storage.data() + 2);
  EXPECT_EQ(dl.byte_offset, 0u);
  ASSERT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.shape[0], 2);
  EXPECT_EQ(dl.shape[1], 5);
  ASSERT_NE(dl.strides, nullptr) << "strides are always written";
  EXPECT_EQ(dl.strides[0], 5);
  EXPECT_EQ(dl.strides[1], 1);
  EXPECT_EQ(dl.dtype.code, dlpack::kDLFloat);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  m->deleter(m);
  EXPECT_TRUE(released);
}

TEST(DLPackExport, ReadOnlySetsTheFlagAndLegacyRefusesIt) {
  std::vector<float> storage(4, 1.f);
  TensorCPU t = HostTensor(storage, {4});
  t.set_read_only(true);
  dlpack::DLManagedTensorVersioned* m = ExportDLPackVersioned(t, std::nullopt);
  EXPECT_EQ(m->flags & dlpack::kDLPackFlagBitmaskReadOnly, dlpack::kDLPackFlagBitmaskReadOnly);
  m->deleter(m);
  EXPECT_THAT([&] { ExportDLPackLegacy(t, std::nullopt); },
              ::testing::ThrowsMessage<InteropError>(HasSubstr("expected a writable tensor, got a read-only one")));
}

TEST(DLPackExport, LegacyWritesStridesOfAView) {
  std::vector<float> storage(20, 1.f);
  Buffer b = Buffer::Wrap(storage.data(), storage.size() * sizeof(float), MemoryKind::kHost, -1, nullptr);
  TensorCPU t = TensorCPU::FromBuffer(b, 0, {4, 5}, DType::kFloat32, Shape{1, 4});  // transposed
  dlpack::DLManagedTensor* m = ExportDLPackLegacy(t, std::nullopt);
  ASSERT_NE(m->dl_tensor.strides, nullptr);
  EXPECT_EQ(m->dl_tensor.strides[0], 1);
  EXPECT_EQ(m->dl_tensor.strides[1], 4);
  m->deleter(m);
}

TEST(DLPackExport, DeviceFollowsMemoryKind) {
  int fake = 0;  // never dereferenced
  auto make = [&](MemoryKind kind, int device) {
    return TensorGPU::FromBuffer(Buffer::Wrap(&fake, sizeof(fake), kind, device, nullptr), 0, {1}, DType::kInt32);
  };
  struct Case {
    MemoryKind kind;
    int device;
    dlpack::DLDeviceType type;
    int id;
  };
  for (const Case& c : {Case{MemoryKind::kDevice, 3, dlpack::kDLCUDA, 3},
                        Case{MemoryKind::kManaged, 0, dlpack::kDLCUDAManaged, 0},
                        Case{MemoryKind::kPinned, -1, dlpack::kDLCUDAHost, 0}}) {
    dlpack::DLManagedTensorVersioned* m = ExportDLPackVersioned(make(c.kind, c.device), std::nullopt);
    EXPECT_EQ(m->dl_tensor.device.device_type, c.type) << MemoryKindName(c.kind);
    EXPECT_EQ(m->dl_tensor.device.device_id, c.id) << MemoryKindName(c.kind);
    EXPECT_EQ(m->dl_tensor.data, &fake);
    m->deleter(m);
  }
}

TEST(DLPackExport, EveryDTypeRoundTrips) {
  std::vector<uint64_t> storage(4, 0x0101010101010101ull);
  for (DType dtype : kAllDTypes) {
    Buffer b = Buffer::Wrap(storage.data(), storage.size() * 8, MemoryKind::kHost, -1, nullptr);
    TensorCPU t = TensorCPU::FromBuffer(b, 0, {2}, dtype);
    AnyTensor back = ImportDLPack(ExportDLPackVersioned(t, std::nullopt));
    EXPECT_EQ(Visit(back, [](const auto& x) { return x.dtype(); }), dtype) << DTypeName(dtype);
    AnyTensor legacy = ImportDLPack(ExportDLPackLegacy(t, std::nullopt));
    EXPECT_EQ(Visit(legacy, [](const auto& x) { return x.dtype(); }), dtype) << DTypeName(dtype);
  }
}

TEST(DLPackExport, RoundTripIsZeroCopyAndReleasesTheOriginalLast) {
  std::vector<float> storage = conveyor::testing::RandomVector<float>(6, -1.f, 1.f);
  DLPackProducer p;
  p.data = storage.data();
  p.shape = {3, 2};
  AnyTensor imported = ImportDLPack(p.Versioned());
  dlpack::DLManagedTensorVersioned* out = ExportDLPackVersioned(imported, std::nullopt);
  imported = TensorCPU();
  EXPECT_EQ(p.deleter_calls, 0) << "the export still holds the producer's memory";
  AnyTensor again = ImportDLPack(out);
  EXPECT_EQ(std::get<TensorCPU>(again).raw_data(), storage.data());
  again = TensorCPU();
  EXPECT_EQ(p.deleter_calls, 1);
}

TEST(DLPackStreamArgument, DecodesTheSpecCodes) {
  EXPECT_TRUE(DecodeDLPackStreamArgument(std::nullopt)->is_legacy()) << "None means the legacy default stream";
  EXPECT_FALSE(DecodeDLPackStreamArgument(-1).has_value()) << "-1 means no synchronisation";
  EXPECT_TRUE(DecodeDLPackStreamArgument(1)->is_legacy());
  EXPECT_TRUE(DecodeDLPackStreamArgument(2)->is_per_thread());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(DecodeDLPackStreamArgument(0x1234)->get()), 0x1234u);
  EXPECT_THAT([] { DecodeDLPackStreamArgument(0); },
              ::testing::ThrowsMessage<InteropError>(HasSubstr("got 0, which the DLPack and CUDA Array Interface specs disallow")));
}

TEST(DeviceView, PinnedHostIsViewableAndPageableIsNot) {
  float x = 0;
  TensorCPU pinned = TensorCPU::FromBuffer(Buffer::Wrap(&x, 4, MemoryKind::kPinned, -1, nullptr), 0, {1},
                                           DType::kFloat32, {}, {}, /*read_only=*/true);
  TensorGPU view = DeviceView(pinned);
  EXPECT_TRUE(view.read_only());
  EXPECT_EQ(view.buffer(), pinned.buffer());
  TensorCPU pageable = TensorCPU::FromBuffer(Buffer::Wrap(&x, 4, MemoryKind::kHost, -1, nullptr), 0, {1},
                                             DType::kFloat32);
  EXPECT_THAT([&] { DeviceView(pageable); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("got pageable host memory")));
}

}  // namespace
}  // namespace conveyor::interop
