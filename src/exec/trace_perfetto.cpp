// Perfetto's protobuf trace (exec/trace_file.h), written with a small
// encoder of the protobuf wire format: a Trace is a sequence of
// TracePackets (field 1), each a track descriptor or a track event.
//
// Field numbers are Perfetto's (protos/perfetto/trace): TracePacket
// timestamp 8, trusted_packet_sequence_id 10, track_event 11,
// sequence_flags 13, track_descriptor 60; TrackDescriptor uuid 1, name 2,
// process 3, parent_uuid 5; ProcessDescriptor pid 1, process_name 6;
// TrackEvent debug_annotations 4, type 9 (1 begin, 2 end), track_uuid 11,
// categories 22, name 23, flow_ids 47, terminating_flow_ids 48;
// DebugAnnotation int_value 4, name 10.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/trace_file.h"

namespace cucpu::trace {

namespace {

// One message being built: fields appended in order.
class Message {
 public:
  void varint(uint32_t field, uint64_t v) {
    tag(field, 0);
    raw_varint(v);
  }
  void fixed64(uint32_t field, uint64_t v) {
    tag(field, 1);
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void bytes(uint32_t field, const std::string& s) {
    tag(field, 2);
    raw_varint(s.size());
    bytes_ += s;
  }
  void message(uint32_t field, const Message& m) { bytes(field, m.bytes_); }
  const std::string& data() const { return bytes_; }

 private:
  void tag(uint32_t field, uint32_t wire) { raw_varint(uint64_t{field} << 3 | wire); }
  void raw_varint(uint64_t v) {
    do {
      const auto b = static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
      bytes_.push_back(b);
      v >>= 7;
    } while (v);
  }
  std::string bytes_;
};

constexpr uint64_t kProcessTrack = 1;  // the tracks are 2, 3, ...
constexpr uint32_t kSequence = 1;

void write_packet(FILE* f, Message& packet, bool first) {
  packet.varint(10, kSequence);
  if (first) packet.varint(13, 1);  // SEQ_INCREMENTAL_STATE_CLEARED
  Message trace;
  trace.message(1, packet);
  std::fwrite(trace.data().data(), 1, trace.data().size(), f);
}

void write_track(FILE* f, uint64_t uuid, const std::string& name, bool first) {
  Message desc;
  desc.varint(1, uuid);
  desc.bytes(2, name);
  desc.varint(5, kProcessTrack);
  Message packet;
  packet.message(60, desc);
  write_packet(f, packet, first);
}

// One begin or end of a slice, in the order the file holds them.
struct Mark {
  uint64_t ts;
  uint64_t track;
  uint32_t slice;
  bool begin;
};

}  // namespace

void write_perfetto(FILE* f, const TraceFile& t) {
  {
    Message process;
    process.varint(1, 1);
    process.bytes(6, t.process);
    Message desc;
    desc.varint(1, kProcessTrack);
    desc.message(3, process);
    Message packet;
    packet.message(60, desc);
    write_packet(f, packet, true);
  }
  // Track uuids: 2, 3, ... for the tracks in order, then the child tracks.
  std::unordered_map<uint64_t, uint64_t> uuid_of;  // TraceFile track id -> uuid
  for (size_t k = 0; k < t.tracks.size(); ++k) uuid_of[t.tracks[k].id] = k + 2;
  uint64_t next_uuid = t.tracks.size() + 2;
  // Each track's slices must nest. Slices are laid out in start order
  // (longer first on a tie, so an op precedes the nodes inside it), each on
  // the first lane of its track where it nests in what is still open (a
  // node on its op's lane): lane 0 is the track, lane k a child track
  // "NAME (k)".
  std::vector<uint32_t> order(t.slices.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const TraceFile::Slice &x = t.slices[a], &y = t.slices[b];
    if (x.track != y.track) return x.track < y.track;
    if (x.t0 != y.t0) return x.t0 < y.t0;
    return x.t1 > y.t1;
  });
  std::vector<Mark> marks;
  marks.reserve(2 * t.slices.size());
  std::vector<uint64_t> slice_uuid(t.slices.size());
  std::vector<uint32_t> slice_lane(t.slices.size());
  struct Child {
    uint64_t parent_track, uuid;
    uint32_t lane;
  };
  std::vector<Child> children;
  for (size_t k = 0; k < order.size();) {
    const uint64_t track = t.slices[order[k]].track;
    std::vector<std::vector<uint32_t>> lanes;  // each lane's open slices, innermost last
    std::vector<uint64_t> lane_uuid;
    auto close_ended = [&](size_t lane, uint64_t now) {
      std::vector<uint32_t>& open = lanes[lane];
      for (; !open.empty() && t.slices[open.back()].t1 <= now; open.pop_back())
        marks.push_back({t.slices[open.back()].t1, lane_uuid[lane], open.back(), false});
    };
    for (; k < order.size() && t.slices[order[k]].track == track; ++k) {
      const uint32_t i = order[k];
      const TraceFile::Slice& s = t.slices[i];
      size_t lane = 0;
      if (s.parent >= 0 && t.slices[s.parent].track == track) {
        lane = slice_lane[s.parent];
        close_ended(lane, s.t0);
      } else {
        for (;; ++lane) {
          if (lane == lanes.size()) {
            lanes.emplace_back();
            const uint64_t uuid = lane == 0 ? uuid_of.at(track) : next_uuid++;
            lane_uuid.push_back(uuid);
            if (lane > 0) children.push_back({track, uuid, static_cast<uint32_t>(lane)});
          }
          close_ended(lane, s.t0);
          const std::vector<uint32_t>& open = lanes[lane];
          if (open.empty() || t.slices[open.back()].t1 >= s.t1) break;
        }
      }
      slice_lane[i] = static_cast<uint32_t>(lane);
      slice_uuid[i] = lane_uuid[lane];
      lanes[lane].push_back(i);
      marks.push_back({s.t0, lane_uuid[lane], i, true});
    }
    for (size_t lane = 0; lane < lanes.size(); ++lane) close_ended(lane, UINT64_MAX);
  }
  for (const TraceFile::Track& k : t.tracks) {
    write_track(f, uuid_of.at(k.id), k.name, false);
    for (const Child& c : children)
      if (c.parent_track == k.id) write_track(f, c.uuid, k.name + " (" + std::to_string(c.lane) + ")", false);
  }
  // Flows leave at their source slice's begin and end at their target's.
  std::vector<std::vector<uint64_t>> flows_out(t.slices.size()), flows_in(t.slices.size());
  for (size_t i = 0; i < t.flows.size(); ++i) {
    flows_out[t.flows[i].from].push_back(i + 1);
    flows_in[t.flows[i].to].push_back(i + 1);
  }
  // Time order; a track's own order (ends before the begins they precede,
  // inner ends first) holds among equal times.
  std::stable_sort(marks.begin(), marks.end(), [](const Mark& a, const Mark& b) { return a.ts < b.ts; });
  for (const Mark& m : marks) {
    const TraceFile::Slice& s = t.slices[m.slice];
    Message ev;
    ev.varint(9, m.begin ? 1 : 2);
    ev.varint(11, m.track);
    if (m.begin) {
      ev.bytes(22, s.category);
      ev.bytes(23, (*t.names)[s.name]);
      for (int a = 0; a < s.nargs; ++a) {
        Message arg;
        arg.bytes(10, s.args[a].key);
        arg.varint(4, static_cast<uint64_t>(s.args[a].value));
        ev.message(4, arg);
      }
      for (uint64_t id : flows_out[m.slice]) ev.fixed64(47, id);
      for (uint64_t id : flows_in[m.slice]) ev.fixed64(48, id);
    }
    Message packet;
    packet.varint(8, m.ts);
    packet.message(11, ev);
    write_packet(f, packet, false);
  }
}

}  // namespace cucpu::trace
