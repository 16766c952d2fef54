#!/usr/bin/env python3
"""Replaces the README example block with what `servesim run` prints for the
README setup command (run after any model or parameter change)."""
import subprocess,re
readme=open('README.md').read()
serve='vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 --tokenizer-mode deepseek_v32 --reasoning-parser deepseek_v3'
bench='vllm bench serve --model deepseek-ai/DeepSeek-V3.2 --backend openai-chat --endpoint /v1/chat/completions --dataset-name sharegpt --dataset-path ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 1000'
out=subprocess.run(['build/servesim','run','--serve',serve,'--bench',bench],capture_output=True,text=True,check=True).stdout
start=readme.index('```\n# engine: vLLM v0.13.0')
end=readme.index('```',start+3)
readme=readme[:start]+'```\n'+out+readme[end:]
open('README.md','w').write(readme)
