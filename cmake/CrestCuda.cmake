# Resolves CREST_WITH_CUDA (AUTO | ON | OFF) into CREST_CUDA_ENABLED and a
# human-readable CREST_CUDA_REASON. ON fails the configure when the toolkit or
# cuBLASLt is missing; AUTO quietly leaves the CUDA parts out.
set(CREST_CUDA_ENABLED OFF)
string(TOUPPER "${CREST_WITH_CUDA}" _crest_cuda_mode)
if(NOT _crest_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "CREST_WITH_CUDA must be AUTO, ON or OFF (got '${CREST_WITH_CUDA}')")
endif()

if(_crest_cuda_mode STREQUAL "OFF")
  set(CREST_CUDA_REASON "disabled with -DCREST_WITH_CUDA=OFF")
else()
  if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  # The engine's operand generator runs on the device: nvcc must be there too.
  if(CUDAToolkit_FOUND AND NOT CMAKE_CUDA_COMPILER AND EXISTS "${CUDAToolkit_NVCC_EXECUTABLE}")
    set(CMAKE_CUDA_COMPILER "${CUDAToolkit_NVCC_EXECUTABLE}")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cublasLt AND TARGET CUDA::cudart AND CMAKE_CUDA_COMPILER)
    set(CREST_CUDA_ENABLED ON)
    set(CREST_CUDA_REASON "CUDA ${CUDAToolkit_VERSION} (${CUDAToolkit_LIBRARY_DIR})")
    # Ampere and Hopper code, and Hopper PTX that newer GPUs compile at load time.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80-real 90-real 90-virtual)
    endif()
    # One CUDA runtime in the process: the shared one that CUDA::cudart is.
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    enable_language(CUDA)
    # The kernel is plain C++17 (CMake 3.25 cannot ask nvcc for C++20).
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
  elseif(_crest_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "CREST_WITH_CUDA=ON but the CUDA toolkit with cuBLASLt and nvcc was not "
                        "found (set CUDAToolkit_ROOT)")
  elseif(CUDAToolkit_FOUND)
    set(CREST_CUDA_REASON "CUDA toolkit found but no working nvcc for the device-side code")
  else()
    set(CREST_CUDA_REASON "CUDA toolkit with cuBLASLt not found")
  endif()
endif()
