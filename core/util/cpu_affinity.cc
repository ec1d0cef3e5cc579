#include "core/util/cpu_affinity.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "core/error.h"

namespace conveyor {
namespace {

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// 1 to max_len decimal digits (6 for CPU and interrupt numbers, 18 for interrupt counts: both fit
// their std::stoi / std::stoll).
bool Digits(const std::string& s, size_t max_len = 6) {
  return !s.empty() && s.size() <= max_len &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The number at the start of a /proc/interrupts line ("  42:"), or -1 (LOC:, NMI: and the like).
int IrqNumber(const std::string& line) {
  const std::string head = Trim(line.substr(0, line.find(':')));
  return Digits(head) && line.find(':') != std::string::npos ? std::stoi(head) : -1;
}

// A PCI address "dddd:bb:dd.f" anywhere in the line.
bool NamesPciAddress(const std::string& line) {
  for (size_t i = 0; i + 12 <= line.size(); ++i) {
    const std::string s = line.substr(i, 12);
    if (std::isxdigit(static_cast<unsigned char>(s[0])) && s[4] == ':' && s[7] == ':' && s[10] == '.' &&
        std::isxdigit(static_cast<unsigned char>(s[11]))) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<int> ParseCpuList(const std::string& text, const std::string& what) {
  const std::string t = Trim(text);
  auto bad = [&](const std::string& why) {
    return InvalidArgument(what + ": expected a CPU list such as 0-13,15; got \"" + text + "\" (" + why + ")");
  };
  if (t.empty()) throw bad("empty");
  std::vector<int> cpus;
  std::stringstream in(t);
  std::string part;
  while (std::getline(in, part, ',')) {
    part = Trim(part);
    const size_t dash = part.find('-');
    const std::string lo = dash == std::string::npos ? part : Trim(part.substr(0, dash));
    const std::string hi = dash == std::string::npos ? part : Trim(part.substr(dash + 1));
    if (!Digits(lo) || !Digits(hi)) throw bad("\"" + part + "\" is not a CPU number or a range a-b");
    const int a = std::stoi(lo), b = std::stoi(hi);
    if (b < a) throw bad("range \"" + part + "\" ends before it starts");
    for (int c = a; c <= b; ++c) cpus.push_back(c);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> GpuInterruptCpus(const std::string& proc_interrupts, const std::vector<std::string>& pci_bus_ids,
                                  const std::function<std::string(int irq)>& irq_cpus) {
  struct Line {
    int irq;
    std::string text;
    std::vector<int64_t> counts;  // per column of the header's CPUs
    int64_t total = 0;
  };
  std::stringstream in(proc_interrupts);
  std::string line;
  std::vector<int> columns;  // the header's CPU numbers ("CPU0 CPU1 ...")
  if (std::getline(in, line)) {
    std::stringstream header(line);
    std::string word;
    while (header >> word) {
      if (word.size() > 3 && word.compare(0, 3, "CPU") == 0 && Digits(word.substr(3))) {
        columns.push_back(std::stoi(word.substr(3)));
      }
    }
  }
  std::vector<Line> nvidia;
  while (std::getline(in, line)) {
    const int irq = IrqNumber(line);
    if (irq < 0 || Lower(line).find("nvidia") == std::string::npos) continue;
    Line l{irq, Lower(line), {}, 0};
    std::stringstream fields(line.substr(line.find(':') + 1));
    std::string word;
    while (l.counts.size() < columns.size() && fields >> word && Digits(word, 18)) {
      const int64_t v = std::stoll(word);
      l.counts.push_back(v);
      l.total += v;
    }
    nvidia.push_back(std::move(l));
  }
  const bool addressed = std::any_of(nvidia.begin(), nvidia.end(), [](const Line& l) { return NamesPciAddress(l.text); });
  std::vector<Line> ours;
  int64_t sum = 0;
  for (Line& l : nvidia) {
    bool match = !addressed;
    for (const std::string& id : pci_bus_ids) match |= !id.empty() && l.text.find(Lower(id)) != std::string::npos;
    if (!match) continue;
    sum += l.total;
    ours.push_back(std::move(l));
  }
  std::vector<int> cpus;
  for (size_t k = 0; k < ours.size(); ++k) {
    const Line& l = ours[k];
    // The lines that carry the GPU's interrupts (the driver has several vectors; on the H100 one
    // took them all); with no history yet, the first vector.
    const bool busy = sum > 0 ? l.total * 20 >= sum : k == 0;
    if (!busy) continue;
    try {
      for (int c : ParseCpuList(irq_cpus(l.irq), "interrupt affinity")) cpus.push_back(c);
    } catch (const InvalidArgument&) {
      // The routing is unreadable: the CPUs that took most of this line's interrupts so far.
      for (size_t c = 0; c < l.counts.size(); ++c) {
        if (l.total > 0 && l.counts[c] * 10 >= l.total) cpus.push_back(columns[c]);
      }
    }
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

ThreadCpus PlanThreadCpus(const std::string& setting, std::vector<int> allowed, std::vector<int> interrupt_cpus) {
  std::sort(allowed.begin(), allowed.end());
  std::sort(interrupt_cpus.begin(), interrupt_cpus.end());
  ThreadCpus plan;
  const std::string s = Trim(setting);
  if (s == "off") {
    plan.summary = "off: threads where the OS puts them";
    return plan;
  }
  if (s.empty() || s == "auto") {
    std::vector<int> avoid, keep;
    for (int c : allowed) {
      (std::binary_search(interrupt_cpus.begin(), interrupt_cpus.end(), c) ? avoid : keep).push_back(c);
    }
    if (avoid.empty()) {
      plan.summary = "auto: all CPUs (no GPU interrupts among them)";
    } else if (avoid.size() * 4 > allowed.size() || keep.size() < 2) {
      plan.summary = "auto: all CPUs (the GPU interrupts' CPUs " + FormatCpuList(avoid) + " are too many of " +
                     FormatCpuList(allowed) + " to leave out)";
    } else {
      plan.restrict = true;
      plan.cpus = keep;
      plan.summary = "auto: CPUs " + FormatCpuList(keep) + " (off " + FormatCpuList(avoid) + ": GPU interrupts)";
    }
    return plan;
  }
  const bool listy = std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == ',' || c == '-' || std::isspace(static_cast<unsigned char>(c));
  });
  if (!listy) {
    throw InvalidArgument("CONVEYOR_THREAD_AFFINITY: expected auto, off or a CPU list such as 0-13,15; got \"" +
                          setting + "\"");
  }
  const std::vector<int> cpus = ParseCpuList(s, "CONVEYOR_THREAD_AFFINITY");
  std::vector<int> outside;
  for (int c : cpus) {
    if (!std::binary_search(allowed.begin(), allowed.end(), c)) outside.push_back(c);
  }
  if (!outside.empty()) {
    throw InvalidArgument("CONVEYOR_THREAD_AFFINITY=\"" + setting + "\": CPUs " + FormatCpuList(outside) +
                          " are not among the CPUs this process may use (" + FormatCpuList(allowed) + ")");
  }
  plan.restrict = true;
  plan.cpus = cpus;
  plan.summary = "CPUs " + FormatCpuList(cpus) + " (CONVEYOR_THREAD_AFFINITY)";
  return plan;
}

}  // namespace conveyor
