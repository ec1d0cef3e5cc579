// The operator catalogue of `conveyor ops`, rendered from the registered schemas (the single
// source of truth: nothing here repeats an operator's docs).
//
// | function          | output                                                           |
// |-------------------|------------------------------------------------------------------|
// | CatalogueList     | one line per operator: name, devices, capturable, first sentence |
// | CataloguePage     | one operator in full: doc, inputs, outputs, arguments            |
// | CatalogueMarkdown | docs/operators.md: an index table and one section per operator   |
//
// Arguments show type, default (or "required"), range or choices, and per-sample support.
#pragma once

#include <string>
#include <vector>

#include "core/op/registry.h"

namespace conveyor::cli {

std::string CatalogueList(const OpRegistry& registry);
std::string CataloguePage(const OpRegistry::Entry& entry);
// `names` empty: every registered operator.
std::string CatalogueMarkdown(const OpRegistry& registry, const std::vector<std::string>& names = {});

// "[0, 1]", ">= 1", "<= 5", "RGB | BGR | GRAY", or "" when the argument is unconstrained.
std::string ArgConstraint(const ArgSchema& arg);

}  // namespace conveyor::cli
