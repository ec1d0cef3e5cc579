// CUDA Array Interface import/export rules with hand-built structs (no GPU needed: the memory kind
// is passed in, so no pointer is ever asked about or dereferenced).
#include "core/interop/cuda_array_interface.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"

namespace conveyor::interop {
namespace {

using ::testing::HasSubstr;

constexpr CaiMemory kDevice0{MemoryKind::kDevice, 0};

class CaiImport : public ::testing::Test {
 protected:
  CudaArrayInterface Valid() {
    CudaArrayInterface cai;
    cai.shape = {4, 6};
    cai.typestr = "<f4";
    cai.data = reinterpret_cast<uintptr_t>(storage_.data());
    cai.version = 3;
    return cai;
  }
  TensorGPU Import(const CudaArrayInterface& cai) {
    return ImportCudaArrayInterface(cai, [this] { ++releases_; }, kDevice0);
  }
  std::string ImportError(const CudaArrayInterface& cai) {
    const int before = releases_;
    try {
      Import(cai);
    } catch (const InteropError& e) {
      EXPECT_EQ(releases_, before + 1) << "a failed import still releases the producer, once";
      return e.what();
    }
    ADD_FAILURE() << "expected InteropError";
    return {};
  }

  std::vector<float> storage_ = std::vector<float>(64, 1.f);  // never read: kind is passed in
  int releases_ = 0;
};

TEST_F(CaiImport, ContiguousWithoutStreamIsAcceptedWithoutSync) {
  {
    TensorGPU t = Import(Valid());
    EXPECT_EQ(t.shape(), Shape({4, 6}));
    EXPECT_EQ(t.strides(), Shape({6, 1}));
    EXPECT_EQ(t.dtype(), DType::kFloat32);
    EXPECT_EQ(t.memory_kind(), MemoryKind::kDevice);
    EXPECT_EQ(t.raw_data(), storage_.data());
    EXPECT_FALSE(t.read_only());
    EXPECT_EQ(t.ready_event(), nullptr) << "stream absent/None: nothing to wait for";
    TensorGPU copy = t;
    t = TensorGPU();
    EXPECT_EQ(releases_, 0);
  }
  EXPECT_EQ(releases_, 1);
}

TEST_F(CaiImport, ReadOnlyDataTupleMakesTheTensorReadOnly) {
  CudaArrayInterface cai = Valid();
  cai.read_only = true;
  TensorGPU t = Import(cai);
  EXPECT_TRUE(t.read_only());
  EXPECT_THAT([&] { t.raw_mutable_data(); }, ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("read-only")));
}

TEST_F(CaiImport, ByteStridesBecomeElementStrides) {
  CudaArrayInterface cai = Valid();
  cai.shape = {6, 4};
  cai.strides = std::vector<int64_t>{4, 24};  // Fortran order
  TensorGPU t = Import(cai);
  EXPECT_EQ(t.strides(), Shape({1, 6}));
}

TEST_F(CaiImport, NegativeByteStridesWrapTheReachableSpan) {
  CudaArrayInterface cai = Valid();
  cai.shape = {3};
  cai.strides = std::vector<int64_t>{-8};
  cai.data = reinterpret_cast<uintptr_t>(storage_.data() + 4);
  TensorGPU t = Import(cai);
  EXPECT_EQ(t.raw_data(), storage_.data() + 4);
  EXPECT_EQ(t.buffer().data(), storage_.data());
  EXPECT_EQ(t.buffer().size(), 5 * sizeof(float));
}

TEST_F(CaiImport, RejectsStridesThatAreNotWholeItems) {
  CudaArrayInterface cai = Valid();
  cai.strides = std::vector<int64_t>{24, 6};
  EXPECT_THAT(ImportError(cai), HasSubstr("field \"strides\": expected byte strides that are multiples of the item "
                                          "size 4 (<f4), got 6 at index 1"));
}

TEST_F(CaiImport, RejectsStridesOfTheWrongLength) {
  CudaArrayInterface cai = Valid();
  cai.strides = std::vector<int64_t>{4};
  EXPECT_THAT(ImportError(cai), HasSubstr("field \"strides\": expected 2 byte strides (one per dimension), got 1"));
}

TEST_F(CaiImport, RejectsMasks) {
  CudaArrayInterface cai = Valid();
  cai.has_mask = true;
  const std::string message = ImportError(cai);
  EXPECT_THAT(message, HasSubstr("field \"mask\": expected None or absent, got a mask"));
}

TEST_F(CaiImport, VersionTwoAndThreeOnly) {
  CudaArrayInterface cai = Valid();
  cai.version = 2;
  EXPECT_NO_THROW(Import(cai));
  cai.version = 1;
  EXPECT_THAT(ImportError(cai), HasSubstr("field \"version\": expected 2 or 3, got 1"));
  cai.version = 4;
  EXPECT_THAT(ImportError(cai), HasSubstr("field \"version\": expected 2 or 3, got 4"));
}

TEST_F(CaiImport, StreamZeroAndNegativeAreRejected) {
  CudaArrayInterface cai = Valid();
  cai.stream = 0;
  EXPECT_THAT(ImportError(cai), HasSubstr("field \"stream\": expected None, 1 (legacy default), 2 (per-thread "
                                          "default) or a stream handle, got 0 (disallowed by the spec)"));
  cai.stream = -1;
  EXPECT_THAT(ImportError(cai), HasSubstr("field \"stream\": expected None, 1 (legacy default), 2 (per-thread "
                                          "default) or a stream handle, got -1"));
}

TEST_F(CaiImport, ParsesTypestrs) {
  struct Case {
    const char* typestr;
    DType want;
  };
  for (const Case& c : {Case{"<f4", DType::kFloat32}, Case{"|u1", DType::kUInt8}, Case{"<f2", DType::kFloat16},
                        Case{"|b1", DType::kBool}, Case{"|i1", DType::kInt8}, Case{"<u2", DType::kUInt16},
                        Case{"<i2", DType::kInt16}, Case{"<i4", DType::kInt32}, Case{"<i8", DType::kInt64},
                        Case{"<f8", DType::kFloat64}, Case{"=f4", DType::kFloat32}}) {
    CudaArrayInterface cai = Valid();
    cai.typestr = c.typestr;
    EXPECT_EQ(Import(cai).dtype(), c.want) << c.typestr;
  }
}

TEST_F(CaiImport, RejectsBadTypestrs) {
  CudaArrayInterface cai = Valid();
  cai.typestr = ">f4";
  EXPECT_THAT(ImportError(cai), HasSubstr("field \"typestr\": typestr \">f4\": big-endian data is not supported"));
  cai.typestr = "<c8";
  EXPECT_THAT(ImportError(cai), HasSubstr("field \"typestr\": typestr \"<c8\": expected kind b, i, u or f"));
  cai.typestr = "f4";
  EXPECT_THAT(ImportError(cai), HasSubstr("expected <byteorder><kind><bytes> such as \"<f4\", got \"f4\""));
  cai.typestr = "<f3";
  EXPECT_THAT(ImportError(cai), HasSubstr("typestr \"<f3\""));
}

TEST_F(CaiImport, RejectsNullDataUnlessEmpty) {
  CudaArrayInterface cai = Valid();
  cai.data = 0;
  EXPECT_THAT(ImportError(cai), HasSubstr("field \"data\": expected a pointer for shape (4, 6), got 0"));
  cai.shape = {0, 6};
  TensorGPU t = Import(cai);
  EXPECT_EQ(t.num_elements(), 0);
}

TEST_F(CaiImport, RejectsBadShapes) {
  CudaArrayInterface cai = Valid();
  cai.shape = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_THAT(ImportError(cai), HasSubstr("field \"shape\": expected at most 8 dimensions, got 9"));
  cai.shape = {4, -6};
  EXPECT_THAT(ImportError(cai), HasSubstr("shape[1]: expected an extent >= 0, got -6"));
  // Found by fuzz/interop: extents whose product overflows int64 (row-major strides overflowed).
  cai.shape = {6317785168349535027, 13};
  EXPECT_THAT(ImportError(cai), HasSubstr("shape: extents (6317785168349535027, 13) hold more than 2^63 elements"));
  // Found by fuzz/interop: a span that wraps around the address space (never dereferenced).
  cai.shape = {4};
  cai.data = UINTPTR_MAX - 7;
  EXPECT_THAT(ImportError(cai), HasSubstr("field \"strides\": data 0xfffffffffffffff8 with shape (4,)"));
  EXPECT_THAT(ImportError(cai), HasSubstr("reaches outside the address space"));
}

TEST_F(CaiImport, RejectsPageableMemory) {
  CudaArrayInterface cai = Valid();
  const int before = releases_;
  EXPECT_THAT([&] { ImportCudaArrayInterface(cai, [this] { ++releases_; }, CaiMemory{MemoryKind::kHost, -1}); },
              ::testing::ThrowsMessage<InteropError>(
                  HasSubstr("field \"data\": expected device-accessible memory, got pageable host memory")));
  EXPECT_EQ(releases_, before + 1);
}

TEST_F(CaiImport, PinnedAndManagedKindsAreKept) {
  TensorGPU pinned = ImportCudaArrayInterface(Valid(), nullptr, CaiMemory{MemoryKind::kPinned, 0});
  EXPECT_EQ(pinned.memory_kind(), MemoryKind::kPinned);
  TensorGPU managed = ImportCudaArrayInterface(Valid(), nullptr, CaiMemory{MemoryKind::kManaged, 0});
  EXPECT_EQ(managed.memory_kind(), MemoryKind::kManaged);
}

TEST(CaiExport, WritesV3FieldsWithByteStridesAndOurStream) {
  std::vector<int16_t> storage(40, 1);
  Buffer b = Buffer::Wrap(storage.data(), storage.size() * 2, MemoryKind::kDevice, 0, nullptr);
  TensorGPU t = TensorGPU::FromBuffer(b, 4, {3, 5}, DType::kInt16, Shape{10, 1}, {}, /*read_only=*/true);
  CudaArrayInterface cai = ExportCudaArrayInterface(t, StreamView::PerThread());
  EXPECT_EQ(cai.version, 3);
  EXPECT_EQ(cai.typestr, "<i2");
  EXPECT_EQ(cai.shape, (std::vector<int64_t>{3, 5}));
  ASSERT_TRUE(cai.strides.has_value());
  EXPECT_EQ(*cai.strides, (std::vector<int64_t>{20, 2}));
  EXPECT_EQ(cai.data, reinterpret_cast<uintptr_t>(storage.data() + 2));
  EXPECT_TRUE(cai.read_only);
  ASSERT_TRUE(cai.stream.has_value());
  EXPECT_EQ(*cai.stream, 2);
  EXPECT_FALSE(cai.has_mask);

  CudaArrayInterface no_stream = ExportCudaArrayInterface(t, std::nullopt);
  EXPECT_FALSE(no_stream.stream.has_value());
}

TEST(CaiExport, BFloat16HasNoTypestr) {
  uint16_t x = 0;
  TensorGPU t = TensorGPU::FromBuffer(Buffer::Wrap(&x, 2, MemoryKind::kDevice, 0, nullptr), 0, {1},
                                      DType::kBFloat16);
  EXPECT_THAT([&] { ExportCudaArrayInterface(t, std::nullopt); },
              ::testing::ThrowsMessage<InteropError>(HasSubstr(
                  "CUDA Array Interface export: field \"typestr\": CUDA Array Interface: bfloat16 has no NumPy typestr")));
}

TEST(CaiExport, RoundTripThroughImport) {
  std::vector<float> storage(12, 2.f);
  TensorGPU t = TensorGPU::FromBuffer(Buffer::Wrap(storage.data(), 48, MemoryKind::kDevice, 0, nullptr), 0, {3, 4},
                                      DType::kFloat32);
  TensorGPU back = ImportCudaArrayInterface(ExportCudaArrayInterface(t, std::nullopt), nullptr, kDevice0);
  EXPECT_EQ(back.raw_data(), t.raw_data());
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(back.strides(), t.strides());
}

}  // namespace
}  // namespace conveyor::interop
