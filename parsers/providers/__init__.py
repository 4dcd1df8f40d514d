"""Provider message shapes (OpenAI, Anthropic, Gemini), SSE streams and token usage, shared by every format that embeds them."""
