#!/usr/bin/env bash
# Installs servesim's build dependencies (Debian 12), builds it, and runs the
# default prediction: vLLM TP8 serving 1000 ShareGPT prompts on one 8xH200 node,
# timed from the committed H200 calibration profile.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! dpkg -s libabsl-dev libeigen3-dev libprotobuf-dev protobuf-compiler libgtest-dev \
     libbenchmark-dev cmake g++ >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq cmake g++ libabsl-dev \
    libeigen3-dev libprotobuf-dev protobuf-compiler libgtest-dev libbenchmark-dev >/dev/null
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target servesim
build/servesim run \
  --serve 'vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 --tokenizer-mode deepseek_v32 --reasoning-parser deepseek_v3' \
  --bench 'vllm bench serve --model deepseek-ai/DeepSeek-V3.2 --backend openai-chat --endpoint /v1/chat/completions --dataset-name sharegpt --dataset-path ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 1000'
