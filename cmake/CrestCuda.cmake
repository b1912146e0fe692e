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
  if(CUDAToolkit_FOUND AND TARGET CUDA::cublasLt AND TARGET CUDA::cudart)
    set(CREST_CUDA_ENABLED ON)
    set(CREST_CUDA_REASON "CUDA ${CUDAToolkit_VERSION} (${CUDAToolkit_LIBRARY_DIR})")
  elseif(_crest_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "CREST_WITH_CUDA=ON but the CUDA toolkit with cuBLASLt was not found "
                        "(set CUDAToolkit_ROOT)")
  else()
    set(CREST_CUDA_REASON "CUDA toolkit with cuBLASLt not found")
  endif()
endif()
