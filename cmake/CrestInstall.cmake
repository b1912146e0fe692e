# Where `cmake --install` puts Crest, and the relocatable bundle (`make
# bundle`, CPack TGZ).
#
# Installed (components "runtime" and "deploy"):
#   bin/crest, bin/crestd
#   lib/crest/libcrest_cublaslt.so            (CUDA builds: the measuring engine,
#                                              loaded when a command first measures)
#   lib/systemd/system/crestd.service         (systemd reads /usr/local/lib/systemd/system)
#   share/crest/crestd.conf.example           (copy to /etc/crest/crestd.conf)
#   share/crest/{k8s,slurm,specs}/            (manifests, sbatch scripts, sweep specs)
#   share/doc/crest/                          (README and docs)
# The bundle adds (component "bundle", never part of a plain install):
#   lib/crest/  the shared libraries crest and crestd need that a GPU node of
#               another distribution may lack (gRPC, protobuf, abseil, OpenSSL,
#               SQLite, libstdc++ ...). Not glibc, and not the NVIDIA driver or
#               the CUDA libraries: those come from the node.
# crest and crestd carry RPATH $ORIGIN/../lib/crest (DT_RPATH, so it also
# serves the bundled libraries' own dependencies); the CUDA libraries are
# found the usual way (ld.so.conf, LD_LIBRARY_PATH).
include(GNUInstallDirs)

foreach(target crest crestd)
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/../lib/crest")
  target_link_options(${target} PRIVATE "LINKER:--disable-new-dtags")
endforeach()

install(TARGETS crest crestd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
if(CREST_CUDA_ENABLED)
  install(TARGETS crest_cublaslt LIBRARY DESTINATION lib/crest COMPONENT runtime)
  # The bundle takes the engine's dependencies too (read by the CODE below).
  install(CODE "set(crest_bundle_modules \"$<TARGET_FILE:crest_cublaslt>\")"
          COMPONENT bundle EXCLUDE_FROM_ALL)
endif()
install(FILES deploy/systemd/crestd.service DESTINATION lib/systemd/system COMPONENT deploy)
install(FILES deploy/systemd/crestd.conf.example DESTINATION ${CMAKE_INSTALL_DATADIR}/crest
        COMPONENT deploy)
install(DIRECTORY deploy/k8s deploy/slurm deploy/specs DESTINATION ${CMAKE_INSTALL_DATADIR}/crest
        COMPONENT deploy USE_SOURCE_PERMISSIONS)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT deploy)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT deploy)

# The bundle's libraries: every runtime dependency of the two binaries but
# the C library, the loader and the NVIDIA/CUDA ones.
install(CODE [[
  file(GET_RUNTIME_DEPENDENCIES
    EXECUTABLES $<TARGET_FILE:crest> $<TARGET_FILE:crestd>
    MODULES ${crest_bundle_modules}
    RESOLVED_DEPENDENCIES_VAR crest_deps
    UNRESOLVED_DEPENDENCIES_VAR crest_missing
    PRE_EXCLUDE_REGEXES
      "^ld-linux" "^linux-vdso" "^libc\\.so" "^libm\\.so" "^libdl\\.so" "^libpthread\\.so"
      "^librt\\.so" "^libutil\\.so" "^libresolv\\.so" "^libanl\\.so"
      "^libcuda\\.so" "^libnvidia" "^libcudart" "^libcublas" "^libnvrtc" "^libnvJitLink")
  foreach(dep IN LISTS crest_deps)
    file(INSTALL "${dep}" DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/crest"
         FOLLOW_SYMLINK_CHAIN)
  endforeach()
  if(crest_missing)
    message(WARNING "bundle: not found, left out: ${crest_missing}")
  endif()
]] COMPONENT bundle EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR TGZ)
set(CPACK_PACKAGE_NAME crest)
set(CPACK_PACKAGE_VENDOR "Crest")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GEMM-shape autotuning service with a result database")
set(CPACK_PACKAGE_FILE_NAME "crest-${PROJECT_VERSION}-linux-${CMAKE_SYSTEM_PROCESSOR}")
# One archive holding the three components (a plain install leaves "bundle" out).
set(CPACK_INSTALL_CMAKE_PROJECTS
    "${CMAKE_BINARY_DIR};crest;runtime;/"
    "${CMAKE_BINARY_DIR};crest;deploy;/"
    "${CMAKE_BINARY_DIR};crest;bundle;/")
set(CPACK_STRIP_FILES ON)
include(CPack)
