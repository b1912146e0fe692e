// `crest fleet submit|pull`: one sweep spec on many crestd, and every node's
// results merged into one catalogue database. A node that cannot be reached
// or whose job fails is reported and skipped; the others go on.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "cli.h"
#include "crest/answers/fleet_health.h"
#include "crest/common/env.h"
#include "crest/common/posix_error.h"
#include "crest/common/str_cat.h"
#include "crest/remote/snapshot.h"
#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "crest/sweep/spec.h"
#include "crest/v1/crest.pb.h"
#include "dff_flags.h"
#include "fleet_targets.h"
#include "interrupt.h"
#include "job_reports.h"
#include "measure_flags.h"
#include "outputs.h"
#include "printer.h"
#include "progress.h"
#include "remote.h"
#include "remote_jobs.h"
#include "run_cli.h"
#include "sweep_input.h"

namespace crest::cli {
namespace {

struct FleetFlags {
  std::string targets;
  std::string targets_dns;
  int parallel = 16;
  // submit
  std::string spec_file;
  DffFlags window;
  std::string backend;
  int priority = 0;
  bool force = false;
  bool no_wait = false;
  double poll_s = 5;
  double give_up_s = 300;
  MeasureFlags measure;
  // pull
  std::string into;
  bool fail_on_slow = false;
};

// What happened on one node.
struct Node {
  std::string target;
  std::optional<DaemonChannel> connection;  // one channel for every call to this node
  bool ok = false;
  bool ended = false;  // submit: the job ended, or the node was given up on
  v1::Job job;
  std::string error;
  std::chrono::steady_clock::time_point failing_since{};
  int64_t bytes = 0;
  store::MergeReport merged;
};

absl::StatusOr<std::vector<std::string>> Targets(const FleetFlags& f) {
  if (f.targets.empty() == f.targets_dns.empty()) {
    return absl::InvalidArgumentError(
        "targets: give exactly one of --targets HOST:PORT,... and --targets-dns NAME[:PORT]");
  }
  if (f.parallel < 1 || f.parallel > 1024) {
    return absl::InvalidArgumentError(
        StrCat("--parallel must be between 1 and 1024 (got ", f.parallel, ")"));
  }
  return f.targets.empty() ? ResolveTargets(f.targets_dns) : ParseTargets(f.targets);
}

// One node per target, each with its channel; the credentials (token, TLS
// files) are read once for all. A bad credential flag fails before any node.
absl::StatusOr<std::vector<Node>> Nodes(const FleetFlags& f) {
  auto targets = Targets(f);
  if (!targets.ok()) return targets.status();
  auto credentials = LoadCredentials(Remote());
  if (!credentials.ok()) return credentials.status();
  std::vector<Node> nodes(targets->size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].target = (*targets)[i];
    nodes[i].connection = DaemonChannel::Open(nodes[i].target, *credentials);
  }
  return nodes;
}

// Runs fn(i) for i in [0, n) on at most `parallel` threads.
void ForEachParallel(size_t n, int parallel, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  const size_t count = std::min<size_t>(n, static_cast<size_t>(parallel));
  for (size_t t = 0; t < count; ++t) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) fn(i);
    });
  }
  for (auto& thread : threads) thread.join();
}

void SubmitOne(const std::string& spec, const FleetFlags& f, Node& node) {
  v1::SubmitJobRequest request;
  request.mutable_spec()->set_json(spec);
  request.set_backend(f.backend);
  request.set_priority(f.priority);
  request.set_force(f.force);
  v1::SubmitJobResponse response;
  if (auto s = CallUnary(*node.connection, &v1::Crest::Stub::SubmitJob, request, &response);
      !s.ok()) {
    node.error = std::string(s.message());
    node.ended = true;
    return;
  }
  node.job = response.job();
}

// One poll of a node whose job has not ended. A node that keeps failing for
// `give_up_s` is given up on; one that answers again (a restarted daemon
// resumes its jobs) is followed on.
void PollOne(const FleetFlags& f, Node& node) {
  const auto now = std::chrono::steady_clock::now();
  v1::GetJobRequest request;
  request.set_id(node.job.id());
  v1::Job job;
  const absl::Status status = CallUnary(*node.connection, &v1::Crest::Stub::GetJob, request, &job);
  if (status.ok()) {
    node.job = job;
    node.failing_since = {};
    node.error.clear();
    if (auto ended = JobStatus(job); !absl::IsUnavailable(ended)) {
      node.ended = true;
      node.ok = ended.ok();
      if (!ended.ok()) node.error = std::string(ended.message());
    }
    return;
  }
  if (node.failing_since == std::chrono::steady_clock::time_point{}) node.failing_since = now;
  node.error = std::string(status.message());
  const double failing_s = std::chrono::duration<double>(now - node.failing_since).count();
  if (failing_s >= f.give_up_s) {
    node.ended = true;
    node.error = StrCat("gave up after ", Duration(failing_s), " unreachable: ", status.message());
  }
}

// OK when every node succeeded; otherwise an error counting and naming the
// nodes that did not (the report above it has the details).
absl::Status Outcome(const std::vector<Node>& nodes, std::string_view what) {
  std::string failed;
  size_t bad = 0;
  for (const auto& n : nodes) {
    if (n.ok) continue;
    failed += StrCat(bad++ ? ", " : "", n.target);
  }
  if (bad == 0) return absl::OkStatus();
  return absl::UnavailableError(
      StrCat(what, " on ", nodes.size() - bad, " of ", nodes.size(), " nodes; not on ", failed));
}

// Polls the nodes' jobs every --poll seconds until all have ended (true)
// or the user interrupts (false), with a progress bar over the fleet.
bool WaitForJobs(const FleetFlags& f, std::vector<Node>& nodes, Io& io) {
  InterruptScope interrupt;
  ProgressReporter progress(io.err, isatty(STDERR_FILENO) != 0, StrCat("fleet of ", nodes.size()));
  const auto start = std::chrono::steady_clock::now();
  bool finished = true;
  while (true) {
    std::vector<size_t> open;
    int64_t done = 0;
    int64_t total = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!nodes[i].ended) open.push_back(i);
      done += nodes[i].job.done();
      total += nodes[i].job.total();
    }
    if (open.empty() && total == 0) break;  // nothing was submitted
    progress.Update(
        done, total,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (open.empty()) break;
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(f.poll_s * 1000));
    while (!interrupt.raised() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (interrupt.raised()) {
      finished = false;
      break;
    }
    ForEachParallel(open.size(), f.parallel, [&](size_t i) { PollOne(f, nodes[open[i]]); });
    for (size_t i : open) {
      const Node& n = nodes[i];
      if (n.ended) {
        progress.Finish();
        io.err << n.target << ": " << (n.ok ? JobLine(n.job) : n.error) << '\n';
      }
    }
  }
  progress.Finish();
  return finished;
}

// What a fleet command reports of its nodes.
FleetReport ReportOf(const std::vector<Node>& nodes, bool pull, const std::string& into) {
  FleetReport r;
  r.pull = pull;
  r.into = into;
  for (const Node& n : nodes)
    r.nodes.push_back({n.target, n.ok, n.error, n.job, n.bytes, n.merged});
  return r;
}

absl::Status Submit(const FleetFlags& f, Io& io) {
  auto made = Nodes(f);
  if (!made.ok()) return made.status();
  std::vector<Node>& nodes = *made;
  if (f.poll_s <= 0 || f.give_up_s < 0) {
    return absl::InvalidArgumentError(
        StrCat("--poll must be positive and --give-up-after not negative (got ", f.poll_s, ", ",
               f.give_up_s, ")"));
  }
  auto spec = SweepSpecText(f.spec_file, f.window, MeasureOverrides(f.measure));
  if (!spec.ok()) return spec.status();
  // A bad spec is refused here once, not by every node.
  if (auto parsed = sweep::ParseSweepSpec(*spec); !parsed.ok()) return parsed.status();
  ForEachParallel(nodes.size(), f.parallel, [&](size_t i) { SubmitOne(*spec, f, nodes[i]); });
  for (const auto& n : nodes) {
    io.err << n.target << ": " << (n.error.empty() ? JobLine(n.job) : "not submitted: " + n.error)
           << '\n';
  }
  bool interrupted = false;
  if (f.no_wait) {
    for (auto& n : nodes) n.ok = n.error.empty();
  } else {
    interrupted = !WaitForJobs(f, nodes, io);
  }
  PrinterFor(io)->Print(ReportOf(nodes, /*pull=*/false, ""));
  if (interrupted) {
    return absl::CancelledError(
        "stopped waiting; the jobs go on (crest fleet submit again waits "
        "for the same jobs)");
  }
  return Outcome(nodes, f.no_wait ? "submitted" : "done");
}

// A directory next to `into` (same filesystem) for snapshots; removed, with
// what is left in it, when this goes.
class DownloadDir {
 public:
  static absl::StatusOr<std::unique_ptr<DownloadDir>> NextTo(const std::string& into) {
    const std::filesystem::path target(into);
    std::string pattern =
        (target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path()) /
        StrCat(".", target.filename().string(), ".pull-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::PermissionDeniedError(
          StrCat("--into: cannot create a download directory next to ", into));
    }
    return std::unique_ptr<DownloadDir>(new DownloadDir(pattern));
  }
  ~DownloadDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    if (ec) {
      std::cerr << "crest: warning: "
                << FromErrorCode(ec, StrCat("cannot remove '", dir_.string(), "'")).message()
                << "\n";
    }
  }
  std::filesystem::path dir() const { return dir_; }

 private:
  explicit DownloadDir(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

// Merges snapshots into the catalogue one at a time (it is one connection).
// An existing catalogue is opened at once, so that a bad file fails before
// any download; a new one is created by the first snapshot to arrive, so
// that with none it is left as it was.
class CatalogueMerger {
 public:
  static absl::StatusOr<std::unique_ptr<CatalogueMerger>> Open(const std::string& into) {
    auto merger = std::unique_ptr<CatalogueMerger>(new CatalogueMerger(into));
    auto exists = DefaultEnv().Exists(into);
    if (!exists.ok()) {
      return absl::Status(exists.status().code(), StrCat("--into: ", exists.status().message()));
    }
    if (*exists) {
      auto opened = store::Store::Open(into);
      if (!opened.ok()) return opened.status();
      merger->catalogue_ = *std::move(opened);
    }
    return merger;
  }

  // Merges `snapshot` and deletes it.
  absl::StatusOr<store::MergeReport> Merge(const std::string& snapshot) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (catalogue_ == nullptr && open_error_.ok()) {
      auto opened = store::Store::Open(into_);
      if (opened.ok()) {
        catalogue_ = *std::move(opened);
      } else {
        open_error_ = opened.status();
      }
    }
    auto merged = catalogue_ ? store::MergeFrom(*catalogue_, snapshot) : open_error_;
    if (auto removed = DefaultEnv().RemoveFile(snapshot); !removed.ok()) {
      std::cerr << "crest: warning: " << removed.message() << "\n";
    }
    return merged;
  }

  absl::Status open_error() const { return open_error_; }

  // The catalogue's devices against their fleet; nullopt with no catalogue.
  std::optional<absl::StatusOr<answers::FleetHealth>> Health() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (catalogue_ == nullptr) return std::nullopt;
    return answers::CheckFleet(*catalogue_, {});
  }

 private:
  explicit CatalogueMerger(std::string into) : into_(std::move(into)) {}
  std::string into_;
  std::mutex mutex_;
  std::unique_ptr<store::Store> catalogue_;
  absl::Status open_error_;
};

absl::Status Pull(const FleetFlags& f, Io& io) {
  auto made = Nodes(f);
  if (!made.ok()) return made.status();
  std::vector<Node>& nodes = *made;
  auto downloads = DownloadDir::NextTo(f.into);
  if (!downloads.ok()) return downloads.status();
  auto merger = CatalogueMerger::Open(f.into);
  if (!merger.ok()) return merger.status();
  // Downloads run in parallel; each snapshot is merged and deleted as soon
  // as it arrives, so the disk holds at most --parallel snapshots.
  ForEachParallel(nodes.size(), f.parallel, [&](size_t i) {
    Node& n = nodes[i];
    const std::string snapshot = ((*downloads)->dir() / StrCat("node-", i, ".db")).string();
    auto bytes = remote::DownloadSnapshot(*n.connection, snapshot);
    if (!bytes.ok()) {
      n.error = std::string(bytes.status().message());
      return;
    }
    n.bytes = *bytes;
    auto merged = (*merger)->Merge(snapshot);
    if (!merged.ok()) {
      n.error = std::string(merged.status().message());
      return;
    }
    n.merged = *merged;
    n.ok = true;
  });
  if (auto s = (*merger)->open_error(); !s.ok()) return s;
  FleetReport report = ReportOf(nodes, /*pull=*/true, f.into);
  if (auto health = (*merger)->Health(); health.has_value()) {
    if (health->ok()) {
      report.health = **std::move(health);
    } else {
      report.health_error = std::string(health->status().message());
    }
  }
  PrinterFor(io)->Print(report);
  if (f.fail_on_slow && report.health.has_value() && answers::SlowerDevices(*report.health) > 0) {
    io.exit_code = kExitRegression;
  }
  return Outcome(nodes, "merged");
}

void AddTargetFlags(CLI::App& app, FleetFlags& f) {
  AddOption(app, "--targets", f.targets, "crestd addresses, HOST:PORT,HOST:PORT,...");
  AddOption(app, "--targets-dns", f.targets_dns,
            "every address this name resolves to, NAME[:PORT] (default port 50051; e.g. a "
            "Kubernetes headless Service)");
  AddOption(app, "--parallel", f.parallel, "nodes talked to at once").ShowDefault();
}

}  // namespace

Command RegisterFleet(CLI::App& root) {
  auto f = std::make_shared<FleetFlags>();
  Command cmd;
  cmd.app = AddCommand(
      root, "fleet",
      "Many crestd at once: submit a sweep to each and wait; pull their results into one "
      "catalogue");
  RequireCommand(*cmd.app);
  CLI::App* submit = AddCommand(
      *cmd.app, "submit",
      "Submit one sweep (--spec FILE or d_ff flags) to every target and wait for each job; "
      "per-node report; exit 1 when any node did not finish");
  AddTargetFlags(*submit, *f);
  AddOption(*submit, "--spec", f->spec_file, "JSON sweep spec (docs/sweep-spec.md)");
  AddDffFlags(*submit, f->window, /*required=*/false);
  AddOption(*submit, "--backend", f->backend,
            "model or cublaslt; default: cublaslt where the node has a device");
  AddOption(*submit, "--priority", f->priority, "larger runs first").ShowDefault();
  AddFlag(*submit, "--force", f->force, "redo GEMMs the databases already hold");
  AddFlag(*submit, "--no-wait", f->no_wait, "submit and return");
  AddOption(*submit, "--poll", f->poll_s, "seconds between job polls").ShowDefault();
  AddOption(*submit, "--give-up-after", f->give_up_s,
            "seconds a node may stay unreachable before it is reported failed (a "
            "restarted crestd resumes its job, so short outages are waited out)")
      .ShowDefault();
  AddMeasureFlags(*submit, f->measure, /*with_device=*/false);
  CLI::App* pull = AddCommand(
      *cmd.app, "pull",
      "Download every target's database snapshot and merge it into a catalogue (idempotent), "
      "then report the catalogue's devices slower than the fleet median of their GPU model "
      "(crest compare --fleet); nodes that fail are reported and skipped; exit 1 when any did");
  AddTargetFlags(*pull, *f);
  AddOption(*pull, "--into", f->into, "catalogue database (created if missing)").Required();
  AddFlag(*pull, "--fail-on-slow", f->fail_on_slow,
          "exit with code 3 when a device is slower than its fleet (after the report; a "
          "node that failed still exits 1)");
  cmd.run = [=](Io& io) -> absl::Status {
    if (Parsed(*submit)) return Submit(*f, io);
    if (Parsed(*pull)) return Pull(*f, io);
    return absl::InvalidArgumentError("fleet: give submit or pull");
  };
  return cmd;
}

}  // namespace crest::cli
