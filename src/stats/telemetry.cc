#include "stats/telemetry.h"

#include <memory>

namespace rockdoc::internal {

Status Telemetry::AttachTo(Engine* engine) {
  auto telemetry = std::make_unique<Telemetry>(engine);
  ROCKDOC_RETURN_IF_ERROR(telemetry->query_stats_.Load(*engine));
  engine->Attach(AttachmentSlot::kStats, std::move(telemetry));
  return Status::OK();
}

void Telemetry::BeforeClose() { query_stats_.Persist(*engine_).IgnoreError(); }

}  // namespace rockdoc::internal
