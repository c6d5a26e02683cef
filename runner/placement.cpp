#include "runner/placement.hpp"

#include <unistd.h>

namespace benchmatrix {

std::string with_placement(const std::string& record_line, const child_placement& placement) {
  json_document record = parse_json(record_line, "record");
  auto& a = record.GetAllocator();
  json_value p(rapidjson::kObjectType);
  p.AddMember("host", json_value(placement.host.c_str(), a), a);
  p.AddMember("device", json_value(placement.device.c_str(), a), a);
  p.AddMember("children_beside", static_cast<uint64_t>(placement.children_beside), a);
  p.AddMember("wall_time_s", placement.wall_time_s, a);
  record.RemoveMember("placement");
  record.AddMember("placement", p, a);
  return to_python_json(record);
}

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "unknown";
  return host;
}

}  // namespace benchmatrix
