// DescriptorArena placement (core/op/descriptor_arena.h) on host memory: entries side by side in
// call order, reservations that only grow, a generation that changes exactly when the layout or
// the buffer does, and what a pass wrote surviving a move to a bigger buffer. The device side
// (Finish, the executor's one copy per segment) is covered by the captured-pipeline GPU tests.
#include "core/op/descriptor_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "core/error.h"
#include "core/op/slot_descriptors.h"

namespace conveyor {
namespace {

TEST(DescriptorArena, EntriesSideBySideInCallOrderAlignedTo64) {
  DescriptorArena arena(MemoryKind::kHost);
  arena.Begin();
  EXPECT_EQ(arena.Place(24), 0u);
  EXPECT_EQ(arena.Place(100), 64u);
  EXPECT_EQ(arena.Place(1), 192u);
  EXPECT_EQ(arena.entries(), 3u);
  EXPECT_EQ(arena.used(), 256u);
  EXPECT_GE(arena.capacity(), arena.used());
}

TEST(DescriptorArena, SameLayoutKeepsTheGenerationAGrowthChangesIt) {
  DescriptorArena arena(MemoryKind::kHost);
  auto pass = [&](size_t a, size_t b) {
    arena.Begin();
    const size_t oa = arena.Place(a);
    const size_t ob = arena.Place(b);
    return std::pair{oa, ob};
  };
  pass(64, 64);
  const uint64_t g = arena.generation();
  // Smaller or equal arrays: same offsets, same generation (no recapture).
  EXPECT_EQ(pass(10, 64), (std::pair<size_t, size_t>{0, 64}));
  EXPECT_EQ(pass(64, 1), (std::pair<size_t, size_t>{0, 64}));
  EXPECT_EQ(arena.generation(), g);
  // The first entry grows: the second moves behind it, the generation changes.
  EXPECT_EQ(pass(65, 64), (std::pair<size_t, size_t>{0, 128}));
  EXPECT_NE(arena.generation(), g);
  const uint64_t g2 = arena.generation();
  // Back to small arrays: reservations never shrink, so nothing moves.
  EXPECT_EQ(pass(1, 1), (std::pair<size_t, size_t>{0, 128}));
  EXPECT_EQ(arena.generation(), g2);
}

// An array placed before the arena moved stays writable where it was, and Settle() brings what was
// written there (before and after the move) into the new buffer.
TEST(DescriptorArena, MoveToABiggerBufferKeepsWhatThePassWrote) {
  DescriptorArena arena(MemoryKind::kHost);
  arena.Begin();
  const size_t a = arena.Place(64);
  unsigned char* early = static_cast<unsigned char*>(arena.host(a));
  std::memset(early, 0x5A, 32);
  const void* before = arena.host_buffer().data();
  const size_t b = arena.Place(size_t{1} << 20);  // beyond the first buffer
  EXPECT_NE(arena.host_buffer().data(), before);
  EXPECT_EQ(b, 64u);
  std::memset(early + 32, 0xC3, 32);  // the first array filled after the second was placed
  std::memset(arena.host(b), 0x11, size_t{1} << 20);
  arena.Settle();
  const auto* p = static_cast<const unsigned char*>(arena.host(a));
  for (int i = 0; i < 64; ++i) ASSERT_EQ(p[i], i < 32 ? 0x5A : 0xC3) << i;
  EXPECT_EQ(static_cast<const unsigned char*>(arena.host(b))[(size_t{1} << 20) - 1], 0x11);
  // The next pass writes straight into the bigger buffer: nothing moves.
  const void* now = arena.host_buffer().data();
  arena.Begin();
  arena.Place(64);
  arena.Place(size_t{1} << 20);
  arena.Settle();
  EXPECT_EQ(arena.host_buffer().data(), now);
}

// SlotDescriptors place into the current arena and read back from it; without one they keep
// their own buffer.
TEST(DescriptorArena, SlotDescriptorsWriteIntoTheCurrentArena) {
  DescriptorArena arena(MemoryKind::kHost);
  SlotDescriptors<int32_t> first, second;
  arena.Begin();
  {
    ScopedDescriptorArena current(&arena);
    // Both arrays written after both were placed (the second placement moves the arena).
    int32_t* a = first.Write(0, 3, StreamView::Legacy());
    int32_t* b = second.Write(0, 5, StreamView::Legacy());
    for (int i = 0; i < 3; ++i) a[i] = 10 + i;
    for (int i = 0; i < 5; ++i) b[i] = 20 + i;
    EXPECT_EQ(static_cast<void*>(b), arena.host(64));
  }
  arena.Settle();
  EXPECT_EQ(CurrentDescriptorArena(), nullptr);
  const auto* words = static_cast<const int32_t*>(arena.host(0));
  EXPECT_EQ(words[0], 10);
  EXPECT_EQ(words[2], 12);
  EXPECT_EQ(static_cast<const int32_t*>(arena.host(64))[4], 24);
}

// After the pass is settled (the executor then captures RunGpu), a Write is refused with a message
// that says where descriptors belong; the next pass places again.
TEST(DescriptorArena, WriteAfterThePassIsRefused) {
  DescriptorArena arena(MemoryKind::kHost);
  SlotDescriptors<int32_t> descs;
  arena.Begin();
  ScopedDescriptorArena current(&arena);
  descs.Write(0, 4, StreamView::Legacy());
  arena.Settle();
  try {
    descs.Write(0, 4, StreamView::Legacy());
    FAIL() << "expected the write after the pass to be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("descriptors written after the segment's PrepareGpu passes (in RunGpu, "
                                         "while the segment is captured): SlotDescriptors::Write belongs in "
                                         "PrepareGpu, Upload in RunGpu"),
              std::string::npos)
        << e.what();
  }
  arena.Begin();
  EXPECT_EQ(descs.Write(0, 4, StreamView::Legacy()), arena.host(0));
  arena.Settle();
  EXPECT_EQ(arena.entries(), 1u);
}

}  // namespace
}  // namespace conveyor
