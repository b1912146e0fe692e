// crestd_testing: crestd plus --model-gemm-delay-ms, for the process tests
// (restarts, signals, fleets of nodes) that need a job still running when
// they act. Never installed.
#include "crestd_main.h"
#include "delayed_backend.h"

int main(int argc, char** argv) {
  double delay_ms = 0;
  crest::service::MainExtension testing;
  testing.add_flags = [&delay_ms](CLI::App& app) {
    crest::cmdline::AddOption(app, "--model-gemm-delay-ms", delay_ms,
                              "sleep this long before each model-backend GEMM (results unchanged)")
        .Group("Testing");
  };
  testing.adjust = [&delay_ms](crest::service::ServerConfig& config) {
    if (delay_ms > 0) config.make_backend = crest::testing::DelayedModelBackends(delay_ms);
  };
  return crest::service::CrestdMain(argc, argv, testing);
}
