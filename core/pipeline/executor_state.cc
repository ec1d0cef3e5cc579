// Executor state: graph analysis (CPU node order, captured segments, staged edges and which
// segment may copy them in its graph), the slots, and teardown. Helpers shared by the stage files.
#include <algorithm>
#include <cstdlib>
#include <optional>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/error.h"
#include "core/pipeline/executor_state.h"

namespace conveyor::pipeline_internal {

[[noreturn]] void RethrowWithContext(const std::string& prefix) {
  try {
    throw;
  } catch (const CudaError& e) {
    throw CudaError(prefix + e.what(), e.code());
  } catch (const SampleRejected& e) {
    throw SampleRejected(prefix + e.what());
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(prefix + e.what());
  } catch (const ConfigError& e) {
    throw ConfigError(prefix + e.what());
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(prefix + e.what());
  } catch (const PluginError& e) {
    throw PluginError(prefix + e.what());
  } catch (const InteropError& e) {
    throw InteropError(prefix + e.what());
  } catch (const std::exception& e) {
    throw Error(prefix + e.what());
  } catch (...) {
    throw Error(prefix + "unknown exception");
  }
}

void RethrowNodeError(const GraphNode& node, const std::string& prefix) {
  try {
    throw;
  } catch (const SampleRejected&) {
    RethrowWithContext(prefix);  // about a sample, not an argument: keeps its type for the re-fill
  } catch (const InvalidArgument& e) {
    const std::string arg = ArgumentNamedIn(node, e.what(), /*quoted_only=*/true);
    const SourceLocation at = arg.empty() ? SourceLocation{} : node.spec.Location("args." + arg);
    if (!at.empty()) throw InvalidArgument(at.ToString() + ": " + prefix + e.what());
    RethrowWithContext(prefix);
  } catch (...) {
    RethrowWithContext(prefix);
  }
}

std::string MessageOf(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

CpuStageSizes CpuStageThreads(int num_threads) {
  const char* env = std::getenv("CONVEYOR_CPU_STAGE_THREADS");
  if (env == nullptr || *env == '\0') return {std::max(1, num_threads), std::max(1, num_threads / 4)};
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (end == env || *end != '\0' || v < 1 || v > 1024) {
    throw ConfigError(std::string("CONVEYOR_CPU_STAGE_THREADS: expected a whole number from 1 to 1024, got \"") +
                      env + "\"");
  }
  return {static_cast<int>(v), static_cast<int>(v)};
}

size_t GraphCopyMaxBytes() {
  const char* env = std::getenv("CONVEYOR_GRAPH_COPY_MAX_BYTES");
  if (env == nullptr || *env == '\0') return kGraphCopyMaxBytes;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(env, &end, 10);
  return (end != nullptr && *end == '\0') ? static_cast<size_t>(v) : kGraphCopyMaxBytes;
}

ExecutorState::ExecutorState(Graph g) : graph(std::move(g)) {
  const PipelineSpec& spec = graph.spec();
  const auto& nodes = graph.nodes();
  const int num_nodes = static_cast<int>(nodes.size());
  depth = std::max(1, spec.prefetch_depth);
  for (const GraphNode& node : nodes) has_gpu = has_gpu || node.device == Device::kGpu;

  auto reject = [&](const GraphNode& node, const std::string& what) {
    const SourceLocation where = node.spec.Location("node");
    throw ConfigError((where.empty() ? "" : where.ToString() + ": ") + node.spec.Describe() + ": " + what);
  };
  pinned_output.resize(nodes.size());
  cpu_dep_count.assign(nodes.size(), 0);
  cpu_consumers.resize(nodes.size());
  for (const GraphNode& node : nodes) {
    pinned_output[node.index].assign(node.spec.outputs().size(), false);
    if (node.op() == kExternalSourceOp) external_sources.push_back(node.index);
  }
  for (const GraphNode& node : nodes) {
    std::vector<int> producers;
    for (const GraphEdge& edge : node.inputs) {
      const GraphNode& producer = graph.node(edge.producer);
      if (node.device == Device::kCpu && producer.device == Device::kGpu) {
        reject(node, "reads \"" + edge.name + "\" from GPU node \"" + producer.name() +
                         "\": the executor runs every CPU node before the GPU stage of an iteration");
      }
      if (node.device == Device::kGpu && producer.device == Device::kGpu && edge.data_device != edge.wanted) {
        reject(node, "reads \"" + edge.name + "\" across devices from GPU node \"" + producer.name() +
                         "\": not supported by the executor");
      }
      // A GPU-stage node reading host data (a decoder's encoded files): pinned, so what it hands
      // to the GPU's copy engines or the JPEG engines is copied by DMA, not through a pageable
      // bounce on the calling thread (docs/executor.md, staging).
      if (node.device == Device::kGpu && edge.data_device == Device::kCpu && edge.wanted == Device::kCpu) {
        pinned_output[edge.producer][edge.output] = true;
      }
      if (edge.staged()) {
        const auto key = std::make_pair(edge.producer, edge.output);
        if (!staged_index.count(key)) {
          staged_index[key] = static_cast<int>(staged_outputs.size());
          staged_outputs.push_back(key);
          pinned_output[edge.producer][edge.output] = true;
        }
      }
      producers.push_back(edge.producer);
    }
    for (const GraphArgInput& arg : node.arg_inputs) {
      const GraphNode& producer = graph.node(arg.source.producer);
      if (producer.device == Device::kGpu) {
        reject(node, "argument \"" + arg.arg + "\" reads \"" + arg.source.name + "\" from GPU node \"" +
                         producer.name() + "\": argument inputs must come from CPU nodes");
      }
      producers.push_back(arg.source.producer);
    }
    if (node.device == Device::kCpu) {
      cpu_nodes.push_back(node.index);
      std::sort(producers.begin(), producers.end());
      producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
      for (int p : producers) {
        ++cpu_dep_count[node.index];
        cpu_consumers[p].push_back(node.index);
      }
    }
  }
  cpu_pending = std::vector<std::atomic<int>>(nodes.size());
  cpu_side.assign(nodes.size(), 0);
  for (int n : cpu_nodes) cpu_side[n] = 1;
  // Two stage threads where there is a CPU stage and either a GPU stage (auto) or they were asked
  // for (a CPU-only pipeline then hands each iteration from one thread to the other: no use but
  // for tests).
  const bool gpu_stage = std::any_of(nodes.begin(), nodes.end(),
                                     [](const GraphNode& node) { return node.device == Device::kGpu; });
  ahead = !cpu_nodes.empty() && (spec.cpu_stage_thread == PipelineSpec::StageThread::kOn ||
                                 (spec.cpu_stage_thread == PipelineSpec::StageThread::kAuto && gpu_stage));

  // Runs of consecutive capturable GPU nodes (in GPU order; the CPU stage runs before all of them).
  for (const GraphNode& node : nodes) {
    if (node.device != Device::kGpu) continue;
    const bool capture = spec.graph_capture && node.capturable() && node.op() != kExternalSourceOp;
    if (capture && !segments.empty() && segments.back().captured) {
      segments.back().nodes.push_back(node.index);
    } else {
      segments.push_back(Segment{{node.index}, capture});
    }
  }

  // GPU nodes with a host phase that read a CPU-stage output on the host: with the CPU stage on its
  // own thread, the executor shows them each iteration's inputs once its CPU stage has run
  // (Operator::LookAhead); with one stage thread the GPU stage follows at once, nothing to gain.
  for (const GraphNode& node : nodes) {
    if (!ahead || node.device != Device::kGpu || node.op() == kExternalSourceOp) continue;
    const bool host_input = std::any_of(node.inputs.begin(), node.inputs.end(), [&](const GraphEdge& edge) {
      return !edge.staged() && edge.data_device == Device::kCpu && cpu_side[edge.producer];
    });
    if (host_input) look_ahead_nodes.push_back(node.index);
  }

  // Staged outputs whose readers all sit in one captured segment may be copied inside its graph.
  std::vector<int> segment_of(nodes.size(), -1);
  for (size_t s = 0; s < segments.size(); ++s) {
    if (segments[s].captured) {
      for (int n : segments[s].nodes) segment_of[n] = static_cast<int>(s);
    }
  }
  staged_segment.assign(staged_outputs.size(), -2);  // -2: no reader seen yet
  for (const GraphNode& node : nodes) {
    for (const GraphEdge& edge : node.inputs) {
      if (!edge.staged()) continue;
      int& seg = staged_segment[staged_index.at({edge.producer, edge.output})];
      const int mine = segment_of[node.index];
      seg = (seg == -2 || seg == mine) ? mine : -1;
    }
  }
  segment_staged.resize(segments.size());
  issue_part_ns = std::vector<std::atomic<int64_t>>(3 * segments.size() + 2);
  if (const char* v = std::getenv("CONVEYOR_ISSUE_DETAIL")) issue_detail = std::string(v) == "1";
  for (size_t j = 0; j < staged_outputs.size(); ++j) {
    if (staged_segment[j] < 0) staged_segment[j] = -1;
    else segment_staged[staged_segment[j]].push_back(static_cast<int>(j));
  }
  graph_copy_max_bytes = GraphCopyMaxBytes();

  std::optional<cuda::DeviceGuard> guard;
  if (has_gpu) {
    device = spec.device_id;
    guard.emplace(device);
    compute = cuda::Stream::Create();
    copy = cuda::Stream::Create();
  }
  pool = std::make_unique<ExecutorPool>(std::max(1, spec.num_threads));
  // With the CPU stage on its own thread, its nodes get an arena of their own (as DALI's mixed
  // decoder has its own thread pool): in the GPU stage's arena the CPU stage of k+1 and the JPEG
  // decoder's host work of k took each other's workers, and the iteration got no shorter (H200:
  // CPU stage 1.7 -> 8.8 ms, GPU issue 24.7 -> 26.5 ms).
  // When the CPU stage runs ahead (its thread waited for a slot), a smaller arena leaves the cores
  // to the GPU stage's host work; a CPU stage the issue thread waits for keeps them all (the A/B of
  // the sizes: docs/executor.md, "CPU stage thread").
  if (ahead) {
    const CpuStageSizes sizes = CpuStageThreads(spec.num_threads);
    cpu_pool = std::make_unique<ExecutorPool>(sizes.behind);
    if (sizes.ahead != sizes.behind) cpu_pool_ahead = std::make_unique<ExecutorPool>(sizes.ahead);
    cpu_stage_pool = cpu_pool.get();
  }
  ops.resize(nodes.size());
  for (const GraphNode& node : nodes) {
    if (node.op() == kExternalSourceOp) continue;
    try {
      ops[node.index] = node.CreateOperator();
    } catch (const SpecError&) {
      throw;  // file:line:col of the argument first, like every other pipeline-file mistake
    } catch (...) {
      RethrowWithContext("pipeline \"" + spec.name + "\": creating node \"" + node.name() + "\" (op \"" +
                         node.op() + "\"): ");
    }
  }
  // Consumers attach themselves to their producers (a decoder's on_error: skip check to its reader).
  for (const GraphNode& node : nodes) {
    if (!ops[node.index]) continue;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const GraphEdge& edge = node.inputs[i];
      try {
        ops[node.index]->ConnectInput(static_cast<int>(i), nodes[edge.producer].spec, ops[edge.producer].get(),
                                      edge.output);
      } catch (...) {
        RethrowWithContext("pipeline \"" + spec.name + "\": connecting node \"" + node.name() + "\" (op \"" +
                           node.op() + "\") to its input \"" + edge.name + "\": ");
      }
    }
  }
  slots.resize(static_cast<size_t>(depth));
  for (int s = 0; s < depth; ++s) {
    Slot& slot = slots[s];
    slot.index = s;
    slot.cpu_out.resize(nodes.size());
    slot.gpu_out.resize(nodes.size());
    for (int n = 0; n < num_nodes; ++n) {
      slot.cpu_out[n].resize(nodes[n].spec.outputs().size());
      slot.gpu_out[n].resize(nodes[n].spec.outputs().size());
      slot.ws.push_back(std::make_unique<Workspace>(nodes[n].spec, spec.batch_size));
    }
    slot.staged.resize(staged_outputs.size());
    slot.staged_in_graph.assign(staged_outputs.size(), 0);
    slot.fed.resize(nodes.size());
    slot.captured.resize(segments.size());
    slot.arenas.resize(segments.size());
    if (has_gpu) {
      slot.ready = std::make_shared<cuda::Event>(cuda::Event::Create());
      slot.alloc_done = cuda::Event::Create();
      slot.copy_done = cuda::Event::Create();
    }
  }
}

ExecutorState::~ExecutorState() {
  if (has_gpu) {
    // Shutdown may block: let queued GPU work finish before its buffers go back to the pools.
    CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(copy.get()));
    CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(compute.get()));
    // Copies of slot lists may outlive the streams (a TensorList taken from the outputs): their
    // buffers must not be returned on a destroyed stream, and nothing is in flight any more.
    auto detach = [](auto& list) {
      Buffer b = list.buffer();
      b.set_release_stream(std::nullopt);
    };
    for (Slot& slot : slots) {
      for (auto& lists : slot.cpu_out) std::for_each(lists.begin(), lists.end(), detach);
      for (auto& lists : slot.gpu_out) std::for_each(lists.begin(), lists.end(), detach);
      std::for_each(slot.staged.begin(), slot.staged.end(), detach);
    }
  }
}

}  // namespace conveyor::pipeline_internal
