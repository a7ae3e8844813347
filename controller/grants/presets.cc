#include "controller/grants/presets.h"

#include <array>
#include <string>

namespace controller::grants {

namespace {

// One line per provider. The upstream is the default base URL of the provider's SDK in the AI SDK
// (the `@ai-sdk/<provider>` package OpenCode loads), so a space's client pointed at the window
// appends the same paths it would append to the real thing. Never taken from anything a space
// said (a grant's upstream is the user's decision).
constexpr std::array kPresets = {
    // @ai-sdk/anthropic: baseURL https://api.anthropic.com/v1; header x-api-key.
    Preset{"anthropic", "https://api.anthropic.com/v1", "x-api-key",
           "@ai-sdk/anthropic default baseURL; x-api-key"},
    // @ai-sdk/openai: baseURL https://api.openai.com/v1; Authorization: Bearer.
    Preset{"openai", "https://api.openai.com/v1", "authorization",
           "@ai-sdk/openai default baseURL; Authorization: Bearer"},
    // @ai-sdk/google (Generative Language API): baseURL .../v1beta; header x-goog-api-key.
    Preset{"google", "https://generativelanguage.googleapis.com/v1beta", "x-goog-api-key",
           "@ai-sdk/google default baseURL; x-goog-api-key"},
    // @openrouter/ai-sdk-provider: baseURL https://openrouter.ai/api/v1; Authorization: Bearer.
    Preset{"openrouter", "https://openrouter.ai/api/v1", "authorization",
           "@openrouter/ai-sdk-provider default baseURL; Authorization: Bearer"},
    // @ai-sdk/groq: baseURL https://api.groq.com/openai/v1; Authorization: Bearer.
    Preset{"groq", "https://api.groq.com/openai/v1", "authorization",
           "@ai-sdk/groq default baseURL; Authorization: Bearer"},
    // @ai-sdk/mistral: baseURL https://api.mistral.ai/v1; Authorization: Bearer.
    Preset{"mistral", "https://api.mistral.ai/v1", "authorization",
           "@ai-sdk/mistral default baseURL; Authorization: Bearer"},
    // @ai-sdk/deepseek: baseURL https://api.deepseek.com/v1; Authorization: Bearer.
    Preset{"deepseek", "https://api.deepseek.com/v1", "authorization",
           "@ai-sdk/deepseek default baseURL; Authorization: Bearer"},
    // @ai-sdk/xai: baseURL https://api.x.ai/v1; Authorization: Bearer.
    Preset{"xai", "https://api.x.ai/v1", "authorization",
           "@ai-sdk/xai default baseURL; Authorization: Bearer"},
};

constexpr std::array kRefused = {
    Refused{"amazon-bedrock",
            "AWS Bedrock signs every request with SigV4 (a signature over the request, not a key "
            "in a header)"},
    Refused{"bedrock",
            "AWS Bedrock signs every request with SigV4 (a signature over the request, not a key "
            "in a header)"},
    Refused{"google-vertex",
            "Vertex AI takes short-lived OAuth tokens minted from service-account credentials, on "
            "a per-project URL"},
    Refused{"vertex",
            "Vertex AI takes short-lived OAuth tokens minted from service-account credentials, on "
            "a per-project URL"},
    Refused{"azure",
            "Azure OpenAI has no default upstream (one URL per resource and deployment, with an "
            "api-version)"},
};

}  // namespace

std::span<const Preset> presets() { return kPresets; }
std::span<const Refused> refused_providers() { return kRefused; }

Result<Preset> find_preset(std::string_view provider) {
  for (const Preset& p : kPresets) {
    if (p.provider == provider) return p;
  }
  for (const Refused& r : kRefused) {
    if (r.provider == provider) {
      return fail(Code::kProviderNotSupported, "grant add --provider " + std::string(provider) +
                                                   ": not supported: " + std::string(r.reason));
    }
  }
  std::string known;
  for (const Preset& p : kPresets) known += (known.empty() ? "" : ", ") + std::string(p.provider);
  return fail(Code::kProviderNotSupported,
              "grant add --provider " + std::string(provider).substr(0, 64) +
                  ": no preset (known: " + known + "); give --upstream and --header instead");
}

}  // namespace controller::grants
