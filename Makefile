# Crest: the two entry points. Both install what is missing first.
#   make demo   install, build, run the h=4096 d_ff sweep through crestd and rank it
#   make test   install, build, run every test (ctest)
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
# CI builds a fresh clone: a unity build (CREST_UNITY) compiles it in about
# half the time, and checks that the sources of a batch agree on their names.
ifeq ($(CI),true)
  CMAKE_FLAGS += -DCREST_WERROR=ON -DCREST_UNITY=ON
endif

.PHONY: all deps configure build demo test bench bundle clean

all: build

deps:
	./scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	./scripts/demo.sh $(BUILD_DIR)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

bench: build
	./scripts/bench.sh $(BUILD_DIR)

# The relocatable .tar.gz (CPack): crest, crestd, the libraries a GPU node of
# another distribution may lack, the unit file, manifests and specs.
bundle: build
	cd $(BUILD_DIR) && cpack

clean:
	rm -rf $(BUILD_DIR)
