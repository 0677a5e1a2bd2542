//===- Trace.cpp - Per-work-item traces of fused kernels ------------------===//

#include "ism/Runner/Trace.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace mlir::ism::runner;

std::vector<TraceItem>
mlir::ism::runner::decodeTrace(llvm::ArrayRef<FusedTrace> traces,
                               TraceSummary &summary) {
  summary = TraceSummary();
  std::vector<TraceItem> items;
  for (auto [region, trace] : llvm::enumerate(traces)) {
    uint64_t offset = 0;
    for (auto [launch, count] : llvm::enumerate(trace.launchItems)) {
      for (uint64_t t = 0; t < count; ++t) {
        size_t at = size_t(offset + t) * kTraceRecordWords;
        if (at + kTraceRecordWords > trace.words.size())
          break;
        const uint64_t *w = &trace.words[at];
        if (w[0] == 0 && w[1] == 0 && w[2] == 0 && w[3] == 0) {
          ++summary.unrecorded;
          continue;
        }
        TraceItem item;
        item.start = w[0];
        item.end = w[1];
        item.sm = uint32_t(w[2] >> 32);
        item.launch = uint16_t(w[2] >> 16);
        item.copy = uint16_t(w[2]);
        item.item = w[3];
        item.region = unsigned(region);
        if (item.launch != launch || item.item != t)
          ++summary.misplaced;
        items.push_back(item);
      }
      offset += count;
    }
  }
  std::set<uint32_t> sms;
  std::set<std::pair<unsigned, unsigned>> kernels;
  for (const TraceItem &item : items) {
    sms.insert(item.sm);
    kernels.insert({item.region, item.launch});
  }
  summary.items = items.size();
  summary.sms = sms.size();
  summary.kernels = kernels.size();
  summary.overlapFraction = computeOverlapFraction(items);
  return items;
}

double
mlir::ism::runner::computeOverlapFraction(llvm::ArrayRef<TraceItem> items) {
  // Per SM, per (region, launch): the intervals [start, end).
  using Group = std::pair<unsigned, unsigned>;
  std::map<uint32_t,
           std::map<Group, std::vector<std::pair<uint64_t, uint64_t>>>>
      bySM;
  for (const TraceItem &item : items)
    if (item.end > item.start)
      bySM[item.sm][{item.region, item.launch}].push_back(
          {item.start, item.end});

  uint64_t overlap = 0, busy = 0;
  for (auto &[sm, groups] : bySM) {
    // The union of each group's intervals (disjoint, sorted), as +1 at its
    // start and -1 at its end; the running sum is then the number of
    // groups active.
    std::vector<std::pair<uint64_t, int>> events;
    for (auto &[group, intervals] : groups) {
      std::sort(intervals.begin(), intervals.end());
      uint64_t start = intervals.front().first, end = intervals.front().second;
      for (const auto &[s, e] : intervals) {
        if (s <= end) {
          end = std::max(end, e);
          continue;
        }
        events.push_back({start, +1});
        events.push_back({end, -1});
        start = s;
        end = e;
      }
      events.push_back({start, +1});
      events.push_back({end, -1});
    }
    std::sort(events.begin(), events.end());
    int active = 0;
    uint64_t previous = 0;
    for (size_t i = 0; i < events.size();) {
      uint64_t now = events[i].first;
      if (active >= 1)
        busy += now - previous;
      if (active >= 2)
        overlap += now - previous;
      for (; i < events.size() && events[i].first == now; ++i)
        active += events[i].second;
      previous = now;
    }
  }
  return busy ? double(overlap) / double(busy) : 0.0;
}

/// `ns` nanoseconds as microseconds with three decimals (exact).
static void printMicros(llvm::raw_ostream &os, uint64_t ns) {
  os << ns / 1000 << '.' << llvm::format("%03u", unsigned(ns % 1000));
}

/// `text` as a JSON string.
static std::string quote(llvm::StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream(os).value(text);
  return out;
}

llvm::Error mlir::ism::runner::writeChromeTrace(
    llvm::StringRef path, llvm::ArrayRef<FusedTrace> traces,
    llvm::ArrayRef<TraceItem> items, const TraceSummary &summary) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return llvm::createStringError("--trace: cannot write '" + path +
                                   "': " + ec.message());

  auto kernelName = [&](unsigned region, unsigned launch) -> std::string {
    const FusedTrace &trace = traces[region];
    if (launch < trace.launchNames.size() && !trace.launchNames[launch].empty())
      return trace.launchNames[launch];
    return "launch " + std::to_string(launch);
  };
  // One thread per (region, launch, copy), numbered in that order: unique
  // whatever the number of launches (a decode step's region has 161).
  std::map<std::tuple<unsigned, unsigned, unsigned>, uint64_t> tids;
  for (const TraceItem &item : items)
    tids.try_emplace({item.region, item.launch, item.copy}, 0);
  uint64_t nextTid = 0;
  for (auto &entry : tids)
    entry.second = nextTid++;
  auto tidOf = [&](const TraceItem &item) -> uint64_t {
    return tids.at({item.region, item.launch, item.copy});
  };

  uint64_t t0 = UINT64_MAX;
  for (const TraceItem &item : items)
    t0 = std::min(t0, item.start);

  std::string fused;
  for (const FusedTrace &trace : traces)
    fused += (fused.empty() ? "" : ", ") + trace.kernel;
  os << "{\n\"displayTimeUnit\": \"ns\",\n\"otherData\": {"
     << "\"generator\": \"ism-run --trace\", \"fused_kernels\": "
     << quote(fused) << ", \"work_items\": \"" << summary.items
     << "\", \"sms\": \"" << summary.sms << "\", \"overlap_fraction\": \""
     << llvm::formatv("{0:F6}", summary.overlapFraction).str() << "\"},\n"
     << "\"traceEvents\": [\n";

  // Metadata: one process per SM, one thread per (launch, copy) on it.
  std::set<uint32_t> sms;
  std::map<std::pair<uint32_t, uint64_t>, const TraceItem *> threads;
  for (const TraceItem &item : items) {
    sms.insert(item.sm);
    threads.try_emplace({item.sm, tidOf(item)}, &item);
  }
  bool first = true;
  auto separator = [&] {
    if (!first)
      os << ",\n";
    first = false;
  };
  for (uint32_t sm : sms) {
    separator();
    os << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " << sm
       << ", \"args\": {\"name\": \"SM " << sm << "\"}},\n"
       << "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": " << sm
       << ", \"args\": {\"sort_index\": " << sm << "}}";
  }
  for (const auto &[key, item] : threads) {
    std::string name =
        kernelName(item->region, item->launch) +
        llvm::formatv(" (launch {0}, copy {1})", item->launch, item->copy)
            .str();
    if (traces.size() > 1)
      name = traces[item->region].kernel + ": " + name;
    separator();
    os << "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " << key.first
       << ", \"tid\": " << key.second
       << ", \"args\": {\"name\": " << quote(name) << "}},\n"
       << "{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": "
       << key.first << ", \"tid\": " << key.second
       << ", \"args\": {\"sort_index\": " << key.second << "}}";
  }

  // The work items, by SM and start.
  std::vector<const TraceItem *> order;
  order.reserve(items.size());
  for (const TraceItem &item : items)
    order.push_back(&item);
  std::stable_sort(order.begin(), order.end(),
                   [](const TraceItem *a, const TraceItem *b) {
                     return std::make_pair(a->sm, a->start) <
                            std::make_pair(b->sm, b->start);
                   });
  for (const TraceItem *item : order) {
    separator();
    os << "{\"name\": " << quote(kernelName(item->region, item->launch))
       << ", \"ph\": \"X\", \"pid\": " << item->sm
       << ", \"tid\": " << tidOf(*item) << ", \"ts\": ";
    printMicros(os, item->start - t0);
    os << ", \"dur\": ";
    printMicros(os, item->end > item->start ? item->end - item->start : 0);
    os << ", \"args\": {\"item\": " << item->item
       << ", \"region\": " << item->region << ", \"launch\": " << item->launch
       << ", \"copy\": " << item->copy << "}}";
  }
  os << "\n]\n}\n";
  os.close();
  if (os.has_error()) {
    std::string message = os.error().message();
    os.clear_error();
    return llvm::createStringError("--trace: cannot write '" + path +
                                   "': " + message);
  }
  return llvm::Error::success();
}
