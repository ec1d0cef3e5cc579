// Per-node conditions (`enable:` / `probability:` on an op entry; docs/yaml.md, "Conditions"):
// one mechanism for every operator, made of ordinary graph nodes that Graph::Build inserts after
// the conditioned node:
//
//   x ──▶ node "fl" ──fl.computed──▶ select "fl.select" ──y──▶   (y: the node's output as written)
//   └──────────────── input 0 ─────────▲      ▲ $enable (host, one scalar per sample)
//             coin "fl.coin" (probability: p, cpu) or the enable: source
//
// The node runs on every sample as usual; `select` (operators/conditional) copies, per sample, the
// node's output where the mask is nonzero and its first input where it is 0, in one launch with
// per-sample descriptors (capturable). The coin is `random.coin_flip` keyed like any node by
// (seed, "fl.coin", iteration, sample), so the draws are reproducible and a resumed run draws the
// same. The select runs where the node runs; the coin on the CPU (arguments are read on the host).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/op/registry.h"
#include "core/pipeline/spec.h"

namespace conveyor {

// The hidden nodes' names (and output names) for conditioned node `node`.
inline std::string ConditionComputedName(const std::string& node) { return node + ".computed"; }
inline std::string ConditionCoinName(const std::string& node) { return node + ".coin"; }
inline std::string ConditionSelectName(const std::string& node) { return node + ".select"; }

// spec.ops with every condition of spec.conditions expanded: the conditioned node writes
// ConditionComputedName, then (probability:) a CPU random.coin_flip node, then the select node
// that writes the node's output name. `placed(op)` is where a node of spec.ops runs (Graph's
// placement), for the check that enable: reads host data.
//
// Throws SpecError at the node's `enable:` / `probability:` naming the node when the condition
// cannot hold: a node with no input or several outputs, a first input read on the host as another
// kind of data (decoders) or a transfer op, p outside [0, 1], both or neither key set, an enable:
// source that no node produces, that the node produces itself, that runs on the GPU, or that its
// producer declares not to be one bool/int per sample (external_source's dtype/ndim, random ops'
// float draws or `shape`). Dtype, layout and ndim of the pass-through, and the mask of any other
// producer, are checked by select on every batch (Setup).
std::vector<OpSpec> ExpandConditions(const PipelineSpec& spec, const OpRegistry& registry,
                                     const std::function<Device(const OpSpec&)>& placed);

}  // namespace conveyor
