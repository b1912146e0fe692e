// Which CUDA libraries the measuring engine loads and whether they fit
// together: what `crest doctor` reports about a node.
#pragma once

#include <string>

namespace crest::measure {

struct CudaLibraries {
  std::string backend_path;   // libcrest_cublaslt.so, the engine (cuda_backend.h)
  std::string load_error;     // why the engine could not be loaded; the rest is then empty
  std::string cudart_path;    // the file the loader chose for the CUDA runtime
  std::string cublaslt_path;  // … and for cuBLASLt
  int runtime_version = 0;    // cudaRuntimeGetVersion(), e.g. 13000
  int cublaslt_version = 0;   // cublasLtGetVersion(), e.g. 130100
  int driver_version = 0;     // highest CUDA version the driver supports; 0 = no driver
  std::string driver_error;   // why driver_version is 0
};

// Loads the engine (this is the one probe that does even without a device)
// and asks it. Never fails: what cannot be found is left empty or 0, with
// load_error or driver_error saying why.
CudaLibraries ProbeCudaLibraries();

}  // namespace crest::measure
