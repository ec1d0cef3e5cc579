#include "cli/summary.h"

#include <cstdio>
#include <sstream>

#include "core/memory/memory_kind.h"
#include "core/memory/stats.h"
#include "core/util/strings.h"

namespace conveyor::cli {

std::string FormatBytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000.0 && u < 4) {
    bytes /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::string FormatSkipped(const ExecutorCounters& c) {
  if (c.skipped_samples == 0 && c.skipped_files.empty()) return "";
  const size_t files = c.skipped_files.size();
  std::ostringstream s;
  s << "  skipped         " << c.skipped_samples << (c.skipped_samples == 1 ? " sample" : " samples") << " of " << files
    << (files == 1 ? " file" : " files") << " (on_error: skip; the reader read others in their place)\n";
  for (size_t i = 0; i < files && i < static_cast<size_t>(kMaxSkippedListed); ++i) {
    const ExecutorCounters::SkippedFile& f = c.skipped_files[i];
    s << "                  " << f.node << ": " << f.file << ": " << f.reason;
    if (f.times > 1) s << " (" << f.times << " times)";
    s << "\n";
  }
  if (files > static_cast<size_t>(kMaxSkippedListed)) {
    s << "                  ... and " << files - kMaxSkippedListed << " more files\n";
  }
  if (c.refilled_iterations > 0) {
    s << "                  " << c.refilled_iterations
      << (c.refilled_iterations == 1 ? " iteration" : " iterations")
      << " redone: the decode, not the reader's check, found the damage\n";
  }
  return s.str();
}

std::string FormatDecoders(const RunMeasurements& m) {
  std::ostringstream s;
  char buf[256];
  if (!m.cpu_decoders.empty()) {
    s << "  decoders        " << Join(m.cpu_decoders, ", ") << " (cpu): libjpeg-turbo, libpng, libtiff, libwebp, ... on the CPU stage's threads\n";
  }
  if (!m.gpu_decoders.empty()) {
    const ops::GpuDecoderCounters& c = m.gpu_decode;
    const int64_t total = c.images_hardware + c.images_cuda + c.images_jpeg2000 + c.images_cpu;
    const double all = total > 0 ? static_cast<double>(total) : 1.0;
    // nvJPEG2000's share only where it decoded something (most pipelines meet no JPEG 2000).
    char jpeg2000[64] = "";
    if (c.images_jpeg2000 > 0) {
      std::snprintf(jpeg2000, sizeof(jpeg2000), "nvJPEG2000 %lld (%.1f%%), ", static_cast<long long>(c.images_jpeg2000),
                    100.0 * static_cast<double>(c.images_jpeg2000) / all);
    }
    std::snprintf(buf, sizeof(buf),
                  " (gpu, nvJPEG): %lld images: hardware engines %lld (%.1f%%), CUDA backend %lld (%.1f%%), "
                  "%sCPU %lld (%.1f%%, %lld %s refused)",
                  static_cast<long long>(total), static_cast<long long>(c.images_hardware),
                  100.0 * static_cast<double>(c.images_hardware) / all, static_cast<long long>(c.images_cuda),
                  100.0 * static_cast<double>(c.images_cuda) / all, jpeg2000, static_cast<long long>(c.images_cpu),
                  100.0 * static_cast<double>(c.images_cpu) / all, static_cast<long long>(c.fallbacks),
                  c.images_jpeg2000 > 0 ? "GPU paths" : "nvJPEG");
    s << "  decoders        " << Join(m.gpu_decoders, ", ") << buf << "\n";
    if (!c.unavailable_reason.empty()) s << "                  (" << c.unavailable_reason << ")\n";
    if (!c.nvjpeg2k_unavailable_reason.empty()) {
      s << "                  (JPEG 2000 on the CPU: " << c.nvjpeg2k_unavailable_reason << ")\n";
    }
  }
  return s.str();
}

std::string FormatFunctions(const RunMeasurements& m) {
  if (m.function_nodes.empty()) return "";
  return "  functions       " + Join(m.function_nodes, ", ") +
         " (python_function): user code on the CPU stage, one call at a time per node, not capturable\n";
}

std::string FormatSummary(const RunMeasurements& m, const ExecutorCounters& c) {
  char buf[512];
  std::ostringstream s;
  std::snprintf(buf, sizeof(buf), "summary: %s on %s, batch %d, %lld iterations (%lld samples) in %.3f s",
                m.pipeline.c_str(), m.device.c_str(), m.batch_size, static_cast<long long>(m.iterations),
                static_cast<long long>(m.samples), m.seconds);
  s << buf;
  if (m.epochs_started > 0) s << ", epoch " << m.epochs_started;
  s << "\n";
  const double secs = m.seconds > 0 ? m.seconds : 1e-9;
  std::snprintf(buf, sizeof(buf), "  throughput      %.1f samples/s, %.2f MB/s of outputs\n",
                static_cast<double>(m.samples) / secs, static_cast<double>(m.output_bytes) / secs / 1e6);
  s << buf;
  // Counters cover every iteration the stage finished (prefetch may have run a few ahead).
  const double its = c.iterations > 0 ? static_cast<double>(c.iterations) : 1.0;
  auto ms = [&](int64_t ns) { return static_cast<double>(ns) / 1e6 / its; };
  std::snprintf(buf, sizeof(buf),
                "  stage time      CPU stage %.3f ms/it, GPU issue %.3f ms/it, GPU wait %.3f ms/it, "
                "idle (waiting for the consumer) %.3f ms/it\n",
                ms(c.stage_cpu_ns), ms(c.stage_issue_ns), ms(c.stage_gpu_wait_ns), ms(c.stage_idle_ns));
  s << buf;
  s << "  CUDA graphs     " << c.captures << " captures, " << c.replays << " replays"
    << (m.graph_capture ? "" : " (graph_capture off)") << "\n";
  s << "  staged copies   " << c.copies_on_copy_stream << " on the copy stream, " << c.copies_in_graph
    << " in captured graphs\n";
  s << "  peak memory    ";
  const MemoryKind kinds[] = {MemoryKind::kHost, MemoryKind::kPinned, MemoryKind::kDevice, MemoryKind::kManaged};
  for (int i = 0; i < 4; ++i) {
    s << (i ? ", " : " ") << MemoryKindName(kinds[i]) << " " << FormatBytes(static_cast<double>(MemoryStats::Get(kinds[i]).peak_bytes));
  }
  s << "\n";
  s << FormatDecoders(m);
  s << FormatFunctions(m);
  s << FormatSkipped(c);
  for (size_t i = 0; i < m.outputs.size(); ++i) s << (i ? "                  " : "  outputs         ") << m.outputs[i] << "\n";
  return s.str();
}

}  // namespace conveyor::cli
