#include "operators/image_common/image_args.h"

#include "core/error.h"

namespace conveyor::ops {

std::string DTypeList(const std::vector<DType>& dtypes) {
  std::string s;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (i > 0) s += i + 1 == dtypes.size() ? " or " : ", ";
    s += std::string(DTypeName(dtypes[i]));
  }
  return s;
}

bool IsSequenceLayout(const Layout& layout) { return layout.ndim() > 1 && layout.find('F') == 0; }

SampleFrames SplitFrames(const Shape& sample, const Layout& layout) {
  if (!IsSequenceLayout(layout) || sample.ndim() < 1) return {1, sample};
  return {sample[0], Shape(sample.begin() + 1, sample.end())};
}

Shape JoinFrames(int64_t count, const Shape& frame, const Layout& layout) {
  if (!IsSequenceLayout(layout)) return frame;
  Shape s{count};
  for (int64_t e : frame) s.push_back(e);
  return s;
}

Layout TakenLayout(const TensorListDesc& desc, const std::vector<Layout>& layouts) {
  for (const Layout& l : layouts) {
    if (l == desc.layout) return l;
  }
  if (desc.layout.empty() && !layouts.empty()) {
    const int rank = desc.shapes.empty() ? layouts[0].ndim() : desc.shapes[0].ndim();
    if (rank == layouts[0].ndim()) return layouts[0];
  }
  return Layout();
}

Layout CheckInput(const OpSpec& spec, const TensorListDesc& desc, int index, const std::vector<Layout>& layouts,
                  const std::vector<DType>& dtypes) {
  const std::string where = spec.Describe() + ": input " + std::to_string(index) + ": ";
  Layout layout = desc.layout;
  if (!layouts.empty()) {
    layout = TakenLayout(desc, layouts);
    if (layout.empty()) {
      std::string want;
      for (size_t i = 0; i < layouts.size(); ++i) want += (i ? " or " : "") + std::string(layouts[i].str());
      const std::string unlabelled_note = desc.layout.empty() && !desc.shapes.empty()
                                              ? " (sample 0 has shape " + desc.shapes[0].ToString() +
                                                    "; an unlabelled batch is taken as " +
                                                    std::string(layouts[0].str()) + " only when every sample has " +
                                                    std::to_string(layouts[0].ndim()) + " dims)"
                                              : "";
      std::string sequences;  // the sequence layouts taken, for a 4-D layout that is none of them
      for (const Layout& l : layouts) {
        if (IsSequenceLayout(l)) sequences += (sequences.empty() ? "" : " or ") + std::string(l.str());
      }
      const std::string sequence_note = !sequences.empty() && desc.layout.ndim() == 4
                                            ? " (a sequence is " + sequences + ": frames first)"
                                            : "";
      throw InvalidArgument(where + "expected layout " + want + ", got " +
                            (desc.layout.empty() ? std::string("none") : std::string(desc.layout.str())) +
                            unlabelled_note + sequence_note);
    }
    for (size_t s = 0; s < desc.shapes.size(); ++s) {
      if (desc.shapes[s].ndim() != layout.ndim()) {
        throw InvalidArgument(where + "sample " + std::to_string(s) + " has shape " + desc.shapes[s].ToString() +
                              ", expected " + std::to_string(layout.ndim()) + " dims (" + std::string(layout.str()) +
                              ")");
      }
    }
  }
  if (!dtypes.empty()) {
    bool ok = false;
    for (DType t : dtypes) ok = ok || t == desc.dtype;
    if (!ok) {
      throw InvalidArgument(where + "expected dtype " + DTypeList(dtypes) + ", got " +
                            std::string(DTypeName(desc.dtype)));
    }
  }
  return layout;
}

std::vector<float> PerChannel(const OpSpec& spec, const std::string& arg, const std::vector<double>& values,
                              int64_t channels, int sample) {
  if (values.size() == 1) return std::vector<float>(static_cast<size_t>(channels), static_cast<float>(values[0]));
  if (static_cast<int64_t>(values.size()) != channels) {
    throw InvalidArgument(spec.Describe() + ": argument \"" + arg + "\": expected 1 or " + std::to_string(channels) +
                          " values (one per channel), got " + std::to_string(values.size()) + " at sample " +
                          std::to_string(sample));
  }
  return std::vector<float>(values.begin(), values.end());
}

void NormalizeFactors(const OpSpec& spec, const std::vector<double>& mean, const std::vector<double>& std,
                      int64_t channels, int sample, float scale, float shift, float* mul, float* add) {
  const std::vector<float> m = PerChannel(spec, "mean", mean, channels, sample);
  const std::vector<float> s = PerChannel(spec, "std", std, channels, sample);
  for (int64_t c = 0; c < channels; ++c) {
    if (s[static_cast<size_t>(c)] == 0.f) {
      throw InvalidArgument(spec.Describe() + ": argument \"std\": must be nonzero, got 0 for channel " +
                            std::to_string(c) + " at sample " + std::to_string(sample));
    }
    mul[c] = scale / s[static_cast<size_t>(c)];
    add[c] = shift - m[static_cast<size_t>(c)] * mul[c];
  }
}

}  // namespace conveyor::ops
