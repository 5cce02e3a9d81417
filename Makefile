# zeroc: thin wrapper over scripts/ and CMake. Two commands matter:
#   make demo   install deps, build, import the example model and show its IR
#   make test   install deps, build, run every test suite
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps configure build test test-hf-suite sanitize demo docs clean

all: build

deps:
	scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) \
	  $(shell command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cmake --build $(BUILD) --target check-zeroc -j $(JOBS)

# The Hugging Face suite at every stage on 1 and 2 ranks (make test runs a
# subset of it; see test/e2e/hf_suite.py).
test-hf-suite: build
	/usr/bin/python3 test/e2e/hf_suite.py --zeroc $(BUILD)/bin/zeroc --work $(BUILD)/hf-suite --full

# The runtimes under AddressSanitizer and UBSan (docs/Testing.md; not part
# of make test).
sanitize: build
	scripts/sanitize-runtime.sh $(BUILD)

demo: build
	scripts/demo.sh $(BUILD)

# Regenerates the ODS reference docs committed in docs/generated/.
docs: build
	cmake --build $(BUILD) --target mlir-doc
	cp $(BUILD)/docs/Dialects/GraphDialect.md $(BUILD)/docs/Dialects/ZeroDialect.md \
	   $(BUILD)/docs/Passes/ZerocPasses.md docs/generated/

clean:
	rm -rf $(BUILD)
