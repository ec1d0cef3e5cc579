#include "core/pipeline/pipeline.h"

#include <algorithm>

#include "core/error.h"
#include "core/pipeline/checkpoint.h"
#include "core/pipeline/yaml_loader.h"

namespace conveyor {

Pipeline Pipeline::FromFile(const std::string& path, GraphOptions options) {
  return Pipeline(LoadPipelineFile(path), options);
}

Pipeline Pipeline::FromYaml(const std::string& text, const std::string& base_dir, GraphOptions options) {
  return Pipeline(ParsePipelineYaml(text, "<string>", base_dir), options);
}

Pipeline::Pipeline(PipelineSpec spec, GraphOptions options) : spec_(std::move(spec)), options_(options) {}
// CONVEYOR_COUNTERS_AT_EXIT=1: a built pipeline prints where its stage thread's time went, per
// iteration, on stderr when destroyed — for front ends that do not show counters (Python, C API).
Pipeline::~Pipeline() {
  const char* env = std::getenv("CONVEYOR_COUNTERS_AT_EXIT");
  if (executor_ == nullptr || env == nullptr || std::string(env) != "1") return;
  try {
    const ExecutorCounters c = executor_->counters();
    const double its = c.iterations > 0 ? static_cast<double>(c.iterations) : 1.0;
    auto ms = [&](int64_t ns) { return static_cast<double>(ns) / 1e6 / its; };
    std::fprintf(stderr,
                 "conveyor: pipeline \"%s\": %lld iterations; ms per iteration: CPU stage %.3f, GPU issue %.3f, GPU "
                 "wait %.3f, idle (waiting for the consumer) %.3f\n",
                 spec_.name.c_str(), static_cast<long long>(c.iterations), ms(c.stage_cpu_ns), ms(c.stage_issue_ns),
                 ms(c.stage_gpu_wait_ns), ms(c.stage_idle_ns));
    for (const auto& part : c.gpu_issue_parts) {
      std::fprintf(stderr, "conveyor:   GPU issue, %s: %.3f ms\n", part.name.c_str(), ms(part.ns));
    }
  } catch (...) {  // a destructor reports nothing it cannot read
  }
}
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;

void Pipeline::CheckBuilt(const char* what) const {
  if (!executor_) throw InvalidArgument("pipeline \"" + spec_.name + "\": " + what + " before Build()");
}

void Pipeline::Build() {
  if (executor_) throw InvalidArgument("pipeline \"" + spec_.name + "\": Build() called twice");
  auto executor = std::make_unique<Executor>(Graph::Build(spec_, options_));
  for (auto& [node, batch] : pending_feeds_) {
    std::visit([&, &node = node](auto& list) { executor->Feed(node, std::move(list)); }, batch);
  }
  pending_feeds_.clear();
  if (!resume_.empty()) {
    const conveyor::Checkpoint cp = conveyor::Checkpoint::Parse(resume_);
    cp.CheckMatches(spec_);
    executor->Resume(cp.iteration, cp.states);
  }
  fingerprint_ = conveyor::Checkpoint::Fingerprint(spec_).Serialize();
  int prime = std::max(1, spec_.prefetch_depth);
  const int64_t fed = executor->FedAhead();
  if (fed >= 0) prime = static_cast<int>(std::min<int64_t>(prime, fed));
  executor->Start(prime);
  executor_ = std::move(executor);
}

void Pipeline::Run() {
  CheckBuilt("Run()");
  executor_->Schedule();
}

PipelineOutputs Pipeline::Outputs() {
  CheckBuilt("Outputs()");
  return executor_->Pop();
}

void Pipeline::Feed(const std::string& node, TensorListCPU batch) {
  if (executor_) {
    executor_->Feed(node, std::move(batch));
  } else {
    pending_feeds_.emplace_back(node, std::move(batch));
  }
}

void Pipeline::Feed(const std::string& node, TensorListGPU batch) {
  if (executor_) {
    executor_->Feed(node, std::move(batch));
  } else {
    pending_feeds_.emplace_back(node, std::move(batch));
  }
}

const Graph& Pipeline::graph() const {
  CheckBuilt("graph()");
  return executor_->graph();
}

std::vector<std::string> Pipeline::output_names() const { return spec_.outputs; }

int64_t Pipeline::EpochSize(const std::string& reader) const {
  CheckBuilt("EpochSize()");
  const Operator* op = executor_->FindOperator(reader);
  const std::optional<int64_t> size = op ? op->EpochSize(spec_.batch_size) : std::nullopt;
  if (!size) {
    throw InvalidArgument("pipeline \"" + spec_.name + "\": node \"" + reader + "\" (op \"" +
                          executor_->graph().node(reader).op() + "\") is not a reader: it has no epoch size");
  }
  return *size;
}

std::string Pipeline::Checkpoint() const {
  CheckBuilt("Checkpoint()");
  const Executor::Snapshot snap = executor_->NextSnapshot();
  conveyor::Checkpoint cp = conveyor::Checkpoint::Parse(fingerprint_);
  cp.iteration = snap.iteration;
  cp.states = snap.states;
  return cp.Serialize();
}

void Pipeline::ResumeFrom(std::string checkpoint) {
  if (executor_) throw InvalidArgument("pipeline \"" + spec_.name + "\": ResumeFrom() after Build()");
  conveyor::Checkpoint::Parse(checkpoint);  // a malformed text is refused here, not at Build
  resume_ = std::move(checkpoint);
}

ExecutorCounters Pipeline::counters() const {
  CheckBuilt("counters()");
  return executor_->counters();
}

}  // namespace conveyor
