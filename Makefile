# xcplab — two commands on a fresh machine: `make demo` and `make test`.
# Everything else (deps, build, bench) is a step they share.

PYTHON     ?= python3
BUILD_DIR  ?= build
FUZZ_DIR   ?= build-fuzz
JOBS       ?= $(shell nproc)
PYTEST_ARGS ?=

.PHONY: all deps build lint test test-cpp test-py test-docker fuzz-smoke demo bench reproduce images clean distclean

all: build

# Installs apt packages + the Python package; re-runs when its inputs change.
.deps-stamp: tools/install-deps.sh tools/apt-packages.txt pyproject.toml
	tools/install-deps.sh

deps: .deps-stamp

$(BUILD_DIR)/build.ninja: CMakeLists.txt | .deps-stamp
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: .deps-stamp $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

test-cpp: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# Brief libFuzzer runs of every parser target (clang build, separate tree).
fuzz-smoke: .deps-stamp
	tools/fuzz-smoke.sh $(FUZZ_DIR)

test-py: build
	$(PYTHON) tools/run-pytest.py $(PYTEST_ARGS)

# Python gates: ruff (curated rules) and mypy (strict on the contract and the agent),
# both configured in pyproject.toml and installed by deps (the dev extras).
lint: .deps-stamp
	$(PYTHON) -m ruff check .
	$(PYTHON) -m mypy

test: lint test-cpp fuzz-smoke test-py

demo: build
	$(PYTHON) -m orchestrator.cli run experiments/quickstart.yaml --out runs

bench: build
	$(PYTHON) bench/run.py --out bench/results.json

# Docker images from a local debootstrapped base (no registry): xcplab/{base,router,host,
# orchestrator,influxdb}. Needs a running dockerd; see tools/images/.
images: build
	tools/install-deps.sh --apt-only tools/apt-packages-images.txt
	tools/images/build-images.sh $(BUILD_DIR)

# The docker backend's suite (opt-in, ~2 min once the images exist): starts the project's
# dockerd unless DOCKER_HOST is set, builds the images only when missing.
test-docker: build
	tools/test-docker.sh $(PYTEST_ARGS)

# Long seed-paper reproductions (opt-in; not part of `make test`).
# The runs stay under runs/reproduce/<UTC time>/; docs/reproductions.md's generated
# tables are rewritten from them whether or not every test passed (failures show there).
# On a shared machine set XCPLAB_TIMING_LOCK=/tmp/xcplab-timing.lock (never `flock FILE
# make reproduce`, which holds the machine for the whole hour): each single run flocks that
# file around itself and each sweep gets it as `--lock` (per point), released between runs.
reproduce: build
	out=runs/reproduce/$$(date -u +%Y%m%dT%H%M%SZ); \
	XCPLAB_REPRODUCE_OUT=$$out $(PYTHON) tools/run-pytest.py -m reproduce $(PYTEST_ARGS); rc=$$?; \
	$(PYTHON) tools/reproductions_doc.py $$out --write || rc=1; exit $$rc

clean:
	-$(PYTHON) -m orchestrator.cli clean --all

distclean: clean
	rm -rf $(BUILD_DIR) $(FUZZ_DIR) .deps-stamp
