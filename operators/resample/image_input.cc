#include "operators/resample/image_input.h"

#include <string>

#include "core/error.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

template <typename T, typename F>
std::string OneOf(const std::vector<T>& v, F name) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    s += (i == 0 ? "" : (i + 1 == v.size() ? " or " : ", "));
    s += std::string(name(v[i]));
  }
  return s;
}

}  // namespace

Layout CheckImageInput(const Workspace& ws, int input, const std::vector<Layout>& layouts,
                       const std::vector<DType>& dtypes, int max_channels) {
  const TensorListDesc d = ws.InputDesc(input);
  const std::string where = ws.spec().Describe() + ": input " + std::to_string(input);
  const Layout layout = TakenLayout(d, layouts);  // an unlabelled batch of the right rank: the first
  if (layout.empty()) {
    std::vector<Layout> sequences;
    for (const Layout& l : layouts) {
      if (IsSequenceLayout(l)) sequences.push_back(l);
    }
    // Another 4-D layout (NHWC, HWCF, FCHW where only FHWC is taken): say which axis order a clip needs.
    const std::string hint =
        !sequences.empty() && d.layout.ndim() == 4
            ? " (a sequence is " + OneOf(sequences, [](const Layout& l) { return l.str(); }) + ": frames first)"
            : "";
    throw InvalidArgument(where + ": expected layout " + OneOf(layouts, [](const Layout& l) { return l.str(); }) +
                          ", got " + (d.layout.empty() ? std::string("none") : std::string(d.layout.str())) + hint);
  }
  bool dtype_ok = false;
  for (DType t : dtypes) dtype_ok = dtype_ok || t == d.dtype;
  if (!dtype_ok) {
    throw InvalidArgument(where + ": expected dtype " + OneOf(dtypes, [](DType t) { return DTypeName(t); }) + ", got " +
                          std::string(DTypeName(d.dtype)));
  }
  const int c_axis = layout.find('C');
  for (size_t i = 0; i < d.shapes.size(); ++i) {
    const Shape& s = d.shapes[i];
    if (s.ndim() != layout.ndim()) {
      throw InvalidArgument(where + ": sample " + std::to_string(i) + ": expected " + std::to_string(layout.ndim()) +
                            " dimensions (" + std::string(layout.str()) + "), got shape " + s.ToString());
    }
    // A zero-sized sample passes: it has no pixels to resample.
    if (max_channels > 0 && c_axis >= 0 && s.num_elements() > 0 && s[c_axis] > max_channels) {
      throw InvalidArgument(where + ": sample " + std::to_string(i) + ": expected at most " +
                            std::to_string(max_channels) + " channels, got " + std::to_string(s[c_axis]) + " (shape " +
                            s.ToString() + ")");
    }
  }
  return layout;
}

}  // namespace conveyor::ops
