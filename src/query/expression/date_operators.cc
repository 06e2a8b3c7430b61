// query/expression/date_operators.cc: the date operators. Calendar fields
// are read in a timezone: an Olson name from the system's tz database
// (/usr/share/zoneinfo, through absl::LoadTimeZone), or a UTC offset
// ("+05:30", "-0800", "+03"); without one, UTC. Dates before 1970 and the
// ISO week calendar follow MongoDB ($isoWeek: weeks start on Monday, week 1
// holds the year's first Thursday; $week: weeks start on Sunday, days
// before the first Sunday are week 0).
#include <cstdio>
#include <limits>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "query/expression/expression_internal.h"

namespace rockdoc::internal::expression_detail {

namespace {

// ---- instants, zones and fields ----

// The instant a date-like value stands for, in milliseconds since the epoch.
StatusOr<int64_t> DateMillis(const Value& v) {
  switch (v.type()) {
    case BsonType::kDateTime: return v.element().DateTime();
    case BsonType::kObjectId: return int64_t{v.element().Oid().timestamp()} * 1000;
    case BsonType::kTimestamp: return int64_t{v.element().Timestamp().t} * 1000;
    default: return Failed(16006, "can't convert from BSON type " + TypeName(v) + " to Date");
  }
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// A UTC offset "+hh", "+hhmm", "+hh:mm" (or -), in seconds; false when
// `s` is not one.
bool ParseOffset(std::string_view s, int* seconds) {
  if (s.size() < 3 || (s[0] != '+' && s[0] != '-')) return false;
  std::string digits;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == ':' && i == 3) continue;
    if (s[i] < '0' || s[i] > '9') return false;
    digits += s[i];
  }
  if (digits.size() != 2 && digits.size() != 4) return false;
  const int hours = std::stoi(digits.substr(0, 2));
  const int minutes = digits.size() == 4 ? std::stoi(digits.substr(2)) : 0;
  if (minutes >= 60) return false;
  *seconds = (s[0] == '-' ? -1 : 1) * (hours * 3600 + minutes * 60);
  return true;
}

// The zone of a `timezone` argument (nullptr arg: UTC). *null when it is
// null or missing (the operator then answers null).
StatusOr<absl::TimeZone> ZoneOf(const ExpressionPtr& arg, const ExpressionVariables& vars, bool* null) {
  *null = false;
  if (arg == nullptr) return absl::UTCTimeZone();
  ROCKDOC_ASSIGN_OR_RETURN(Value tz, arg->Evaluate(vars));
  if (IsNullish(tz)) {
    *null = true;
    return absl::UTCTimeZone();
  }
  if (tz.type() != BsonType::kString) {
    return Failed(40517, "timezone must evaluate to a string, found " + TypeName(tz));
  }
  const std::string_view name = tz.element().String();
  int offset = 0;
  if (ParseOffset(name, &offset)) return absl::FixedTimeZone(offset);
  absl::TimeZone zone;
  if (name.find('\0') == std::string_view::npos && !name.empty() &&
      absl::LoadTimeZone(std::string(name), &zone)) {
    return zone;
  }
  return Failed(40485, "unrecognized time zone identifier: \"" + std::string(name) + "\"");
}

struct Fields {
  absl::CivilSecond local;
  int millis;
  int offset_seconds;
};

Fields FieldsOf(int64_t ms, const absl::TimeZone& zone) {
  const int64_t seconds = FloorDiv(ms, 1000);
  const absl::Time t = absl::FromUnixSeconds(seconds);
  const absl::TimeZone::CivilInfo info = zone.At(t);
  return Fields{info.cs, static_cast<int>(ms - seconds * 1000), info.offset};
}

// The instant of a local time in a zone (the earlier one when it repeats).
int64_t MillisOf(const absl::CivilSecond& local, int millis, const absl::TimeZone& zone) {
  const absl::Time t = zone.At(local).pre;
  return absl::ToUnixSeconds(t) * 1000 + millis;
}

int DayOfWeekSunday1(const absl::CivilDay& d) {  // Sunday 1 ... Saturday 7
  switch (absl::GetWeekday(d)) {
    case absl::Weekday::sunday: return 1;
    case absl::Weekday::monday: return 2;
    case absl::Weekday::tuesday: return 3;
    case absl::Weekday::wednesday: return 4;
    case absl::Weekday::thursday: return 5;
    case absl::Weekday::friday: return 6;
    default: return 7;
  }
}
int IsoDayOfWeek(const absl::CivilDay& d) {  // Monday 1 ... Sunday 7
  const int s = DayOfWeekSunday1(d);
  return s == 1 ? 7 : s - 1;
}
// ISO 8601 week and week-numbering year.
void IsoWeek(const absl::CivilDay& d, int64_t* year, int* week) {
  const absl::CivilDay thursday = d + (4 - IsoDayOfWeek(d));
  *year = thursday.year();
  *week = (absl::GetYearDay(thursday) - 1) / 7 + 1;
}
// %U: weeks begin on Sunday; days before the year's first Sunday are week 0.
int SundayWeek(const absl::CivilDay& d) {
  const int yday = absl::GetYearDay(d) - 1;
  return (yday + 7 - (DayOfWeekSunday1(d) - 1)) / 7;
}

std::string Pad(int64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%0*lld", width, static_cast<long long>(v));
  return buf;
}

// ---- the date part operators ----

enum class DatePart {
  kYear, kMonth, kDayOfMonth, kHour, kMinute, kSecond, kMillisecond, kDayOfWeek, kDayOfYear,
  kWeek, kIsoWeek, kIsoWeekYear, kIsoDayOfWeek
};

const ExpressionPtr kNoZone;

// Args: {date, timezone (may be nullptr)}.
template <DatePart kPart>
StatusOr<Value> DatePartOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  bool null_zone = false;
  ROCKDOC_ASSIGN_OR_RETURN(absl::TimeZone zone,
                           ZoneOf(args.size() > 1 ? args[1] : kNoZone, vars, &null_zone));
  if (IsNullish(v) || null_zone) return NullValue();
  ROCKDOC_ASSIGN_OR_RETURN(int64_t ms, DateMillis(v));
  const Fields f = FieldsOf(ms, zone);
  const absl::CivilDay day(f.local);
  int64_t iso_year = 0;
  int iso_week = 0;
  IsoWeek(day, &iso_year, &iso_week);
  switch (kPart) {
    case DatePart::kYear: return IntegerValue(f.local.year());
    case DatePart::kMonth: return Int32Value(f.local.month());
    case DatePart::kDayOfMonth: return Int32Value(f.local.day());
    case DatePart::kHour: return Int32Value(f.local.hour());
    case DatePart::kMinute: return Int32Value(f.local.minute());
    case DatePart::kSecond: return Int32Value(f.local.second());
    case DatePart::kMillisecond: return Int32Value(f.millis);
    case DatePart::kDayOfWeek: return Int32Value(DayOfWeekSunday1(day));
    case DatePart::kDayOfYear: return Int32Value(absl::GetYearDay(day));
    case DatePart::kWeek: return Int32Value(SundayWeek(day));
    case DatePart::kIsoWeek: return Int32Value(iso_week);
    case DatePart::kIsoWeekYear: return Int64Value(iso_year);
    case DatePart::kIsoDayOfWeek: return Int32Value(IsoDayOfWeek(day));
  }
  return NullValue();
}

// ---- $dateToString ----

Status FormatDate(std::string_view format, int64_t ms, const absl::TimeZone& zone, std::string* out) {
  const Fields f = FieldsOf(ms, zone);
  const absl::CivilDay day(f.local);
  int64_t iso_year = 0;
  int iso_week = 0;
  IsoWeek(day, &iso_year, &iso_week);
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out->push_back(format[i]);
      continue;
    }
    if (i + 1 == format.size()) return Failed(18535, "Unmatched '%' at end of format string");
    const char c = format[++i];
    switch (c) {
      case 'd': *out += Pad(f.local.day(), 2); break;
      case 'G': *out += Pad(iso_year, 4); break;
      case 'H': *out += Pad(f.local.hour(), 2); break;
      case 'j': *out += Pad(absl::GetYearDay(day), 3); break;
      case 'L': *out += Pad(f.millis, 3); break;
      case 'm': *out += Pad(f.local.month(), 2); break;
      case 'M': *out += Pad(f.local.minute(), 2); break;
      case 'S': *out += Pad(f.local.second(), 2); break;
      case 'w': *out += Pad(DayOfWeekSunday1(day), 1); break;
      case 'u': *out += Pad(IsoDayOfWeek(day), 1); break;
      case 'U': *out += Pad(SundayWeek(day), 2); break;
      case 'V': *out += Pad(iso_week, 2); break;
      case 'Y': *out += Pad(f.local.year(), 4); break;
      case 'z': {
        const int o = f.offset_seconds;
        *out += (o < 0 ? "-" : "+") + Pad(std::abs(o) / 3600, 2) + Pad(std::abs(o) / 60 % 60, 2);
        break;
      }
      case 'Z': *out += std::to_string(f.offset_seconds / 60); break;
      case '%': out->push_back('%'); break;
      default:
        return Failed(18536, std::string("Invalid format character '%") + c + "' in format string");
    }
  }
  return Status::OK();
}

constexpr std::string_view kIsoFormat = "%Y-%m-%dT%H:%M:%S.%LZ";

// {date, format, timezone, onNull}
StatusOr<Value> DateToStringOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value date, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value format, EvaluateOptional(args[1], vars));
  bool null_zone = false;
  ROCKDOC_ASSIGN_OR_RETURN(absl::TimeZone zone, ZoneOf(args[2], vars, &null_zone));
  if (args[1] != nullptr && !IsNullish(format) && format.type() != BsonType::kString) {
    return Failed(18533, "$dateToString requires that 'format' be a string, found: " +
                             TypeName(format) + " with value " + Shown(format));
  }
  if (IsNullish(date)) {
    if (args[3] != nullptr) return args[3]->Evaluate(vars);
    return NullValue();
  }
  if ((args[1] != nullptr && IsNullish(format)) || null_zone) return NullValue();
  ROCKDOC_ASSIGN_OR_RETURN(int64_t ms, DateMillis(date));
  std::string out;
  ROCKDOC_RETURN_IF_ERROR(FormatDate(args[1] != nullptr ? format.element().String() : kIsoFormat,
                                     ms, zone, &out));
  return StringValue(out);
}

// ---- $dateFromString ----

Status ParseFailed(std::string_view s, std::string_view why) {
  return Failed(241, "Error parsing date string '" + std::string(s) + "'; " + std::string(why));
}

struct ParsedDate {
  int64_t year = 1970;
  int month = 1, day = 1, hour = 0, minute = 0, second = 0, millis = 0;
  int day_of_year = 0;
  int64_t iso_year = 0;
  int iso_week = 0, iso_day = 0;
  bool has_offset = false;
  int offset_seconds = 0;
};

// Reads up to `max` (at least `min`) digits at s[*i].
bool Digits(std::string_view s, size_t* i, size_t min, size_t max, int64_t* out) {
  size_t n = 0;
  int64_t v = 0;
  while (*i < s.size() && n < max && s[*i] >= '0' && s[*i] <= '9') {
    v = v * 10 + (s[(*i)++] - '0');
    ++n;
  }
  *out = v;
  return n >= min;
}

// "Z", "+hh[:mm]", "-hhmm", or a zone name in brackets is not accepted.
bool ReadOffset(std::string_view s, size_t* i, ParsedDate* p) {
  if (*i < s.size() && s[*i] == 'Z') {
    ++*i;
    p->has_offset = true;
    p->offset_seconds = 0;
    return true;
  }
  if (*i >= s.size() || (s[*i] != '+' && s[*i] != '-')) return false;
  const int sign = s[(*i)++] == '-' ? -1 : 1;
  int64_t h = 0, m = 0;
  if (!Digits(s, i, 2, 2, &h)) return false;
  if (*i < s.size() && s[*i] == ':') ++*i;
  Digits(s, i, 0, 2, &m);
  p->has_offset = true;
  p->offset_seconds = sign * static_cast<int>(h * 3600 + m * 60);
  return true;
}

Status ParseWithFormat(std::string_view s, std::string_view format, ParsedDate* p) {
  size_t i = 0;
  for (size_t k = 0; k < format.size(); ++k) {
    if (format[k] != '%') {
      if (i >= s.size() || s[i] != format[k]) return ParseFailed(s, "Format literal not found");
      ++i;
      continue;
    }
    if (k + 1 == format.size()) return Failed(18535, "Unmatched '%' at end of format string");
    const char c = format[++k];
    int64_t v = 0;
    bool ok = true;
    switch (c) {
      case 'Y': ok = Digits(s, &i, 4, 4, &v); p->year = v; break;
      case 'm': ok = Digits(s, &i, 1, 2, &v); p->month = static_cast<int>(v); break;
      case 'd': ok = Digits(s, &i, 1, 2, &v); p->day = static_cast<int>(v); break;
      case 'H': ok = Digits(s, &i, 1, 2, &v); p->hour = static_cast<int>(v); break;
      case 'M': ok = Digits(s, &i, 1, 2, &v); p->minute = static_cast<int>(v); break;
      case 'S': ok = Digits(s, &i, 1, 2, &v); p->second = static_cast<int>(v); break;
      case 'L': {
        const size_t start = i;
        ok = Digits(s, &i, 1, 3, &v);
        for (size_t n = i - start; n < 3; ++n) v *= 10;
        p->millis = static_cast<int>(v);
        break;
      }
      case 'j': ok = Digits(s, &i, 1, 3, &v); p->day_of_year = static_cast<int>(v); break;
      case 'G': ok = Digits(s, &i, 4, 4, &v); p->iso_year = v; break;
      case 'V': ok = Digits(s, &i, 1, 2, &v); p->iso_week = static_cast<int>(v); break;
      case 'u': ok = Digits(s, &i, 1, 1, &v); p->iso_day = static_cast<int>(v); break;
      case 'z': ok = ReadOffset(s, &i, p); break;
      case 'Z': {
        const int sign = i < s.size() && s[i] == '-' ? -1 : 1;
        if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
        ok = Digits(s, &i, 1, 4, &v);
        p->has_offset = true;
        p->offset_seconds = sign * static_cast<int>(v) * 60;
        break;
      }
      case '%': ok = i < s.size() && s[i++] == '%'; break;
      default:
        return Failed(18536, std::string("Invalid format character '%") + c + "' in format string");
    }
    if (!ok) return ParseFailed(s, std::string("Unexpected data for %") + c);
  }
  if (i != s.size()) return ParseFailed(s, "Trailing data");
  return Status::OK();
}

// Without a format: ISO 8601 as MongoDB reads it ("2017-02-08",
// "2017-02-08T12:10:40.787Z", "2017-02-08 12:10:40+05:30", ...).
Status ParseIso(std::string_view s, ParsedDate* p) {
  size_t i = 0;
  int64_t v = 0;
  auto expect = [&](char c) { return i < s.size() && s[i] == c ? (++i, true) : false; };
  if (!Digits(s, &i, 4, 4, &v)) return ParseFailed(s, "no year found");
  p->year = v;
  if (!expect('-') && !expect('/')) return ParseFailed(s, "missing month");
  if (!Digits(s, &i, 1, 2, &v)) return ParseFailed(s, "missing month");
  p->month = static_cast<int>(v);
  if (!expect('-') && !expect('/')) return ParseFailed(s, "missing day");
  if (!Digits(s, &i, 1, 2, &v)) return ParseFailed(s, "missing day");
  p->day = static_cast<int>(v);
  if (i < s.size() && (s[i] == 'T' || s[i] == ' ')) {
    ++i;
    if (!Digits(s, &i, 1, 2, &v)) return ParseFailed(s, "missing hour");
    p->hour = static_cast<int>(v);
    if (expect(':')) {
      if (!Digits(s, &i, 2, 2, &v)) return ParseFailed(s, "missing minute");
      p->minute = static_cast<int>(v);
      if (expect(':')) {
        if (!Digits(s, &i, 2, 2, &v)) return ParseFailed(s, "missing second");
        p->second = static_cast<int>(v);
        if (expect('.')) {
          const size_t start = i;
          if (!Digits(s, &i, 1, 9, &v)) return ParseFailed(s, "missing fraction");
          size_t n = i - start;
          for (; n > 3; --n) v /= 10;
          for (; n < 3; ++n) v *= 10;
          p->millis = static_cast<int>(v);
        }
      }
    }
  }
  if (i < s.size() && !ReadOffset(s, &i, p)) return ParseFailed(s, "Trailing data");
  if (i != s.size()) return ParseFailed(s, "Trailing data");
  return Status::OK();
}

StatusOr<int64_t> ParsedMillis(std::string_view s, const ParsedDate& p, const absl::TimeZone& zone) {
  absl::CivilSecond local;
  if (p.iso_year != 0) {
    const absl::CivilDay jan4(p.iso_year, 1, 4);
    const absl::CivilDay week1_monday = jan4 - (IsoDayOfWeek(jan4) - 1);
    const absl::CivilDay d = week1_monday + (std::max(p.iso_week, 1) - 1) * 7 + (std::max(p.iso_day, 1) - 1);
    local = absl::CivilSecond(d.year(), d.month(), d.day(), p.hour, p.minute, p.second);
  } else if (p.day_of_year != 0) {
    const absl::CivilDay d = absl::CivilDay(p.year, 1, 1) + (p.day_of_year - 1);
    local = absl::CivilSecond(d.year(), d.month(), d.day(), p.hour, p.minute, p.second);
  } else {
    if (p.month < 1 || p.month > 12 || p.day < 1 ||
        p.day > absl::GetYearDay(absl::CivilDay(p.year, p.month + 1, 1) - 1) -
                    absl::GetYearDay(absl::CivilDay(p.year, p.month, 1)) + 1 ||
        p.hour > 23 || p.minute > 59 || p.second > 59) {
      return ParseFailed(s, "The parsed date was invalid");
    }
    local = absl::CivilSecond(p.year, p.month, p.day, p.hour, p.minute, p.second);
  }
  if (p.has_offset) {
    return (local - absl::CivilSecond(1970, 1, 1, 0, 0, 0) - p.offset_seconds) * 1000 + p.millis;
  }
  return MillisOf(local, p.millis, zone);
}

// {dateString, format, timezone, onError, onNull}
StatusOr<Value> DateFromStringOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value input, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value format, EvaluateOptional(args[1], vars));
  bool null_zone = false;
  ROCKDOC_ASSIGN_OR_RETURN(absl::TimeZone zone, ZoneOf(args[2], vars, &null_zone));
  if (args[1] != nullptr && !IsNullish(format) && format.type() != BsonType::kString) {
    return Failed(40684, "$dateFromString requires that 'format' be a string, found: " +
                             TypeName(format) + " with value " + Shown(format));
  }
  if (IsNullish(input)) {
    if (args[4] != nullptr) return args[4]->Evaluate(vars);
    return NullValue();
  }
  if (null_zone || (args[1] != nullptr && IsNullish(format))) return NullValue();
  auto parse = [&]() -> StatusOr<int64_t> {
    if (input.type() != BsonType::kString) {
      return Failed(241, "$dateFromString requires that 'dateString' be a string, found: " +
                             TypeName(input) + " with value " + Shown(input));
    }
    const std::string_view s = input.element().String();
    ParsedDate p;
    ROCKDOC_RETURN_IF_ERROR(args[1] != nullptr ? ParseWithFormat(s, format.element().String(), &p)
                                               : ParseIso(s, &p));
    if (p.has_offset && args[2] != nullptr) {
      return Failed(40554, "you cannot pass in a date/time string with GMT offset together with "
                           "a timezone argument");
    }
    return ParsedMillis(s, p, zone);
  };
  StatusOr<int64_t> ms = parse();
  if (!ms.ok()) {
    if (args[3] != nullptr && static_cast<int>(ms.status().code()) == 241) {
      return args[3]->Evaluate(vars);
    }
    return ms.status();
  }
  return DateValue(*ms);
}

// ---- $dateToParts / $dateFromParts ----

// {date, timezone, iso8601}
StatusOr<Value> DateToPartsOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value date, args[0]->Evaluate(vars));
  bool null_zone = false;
  ROCKDOC_ASSIGN_OR_RETURN(absl::TimeZone zone, ZoneOf(args[1], vars, &null_zone));
  ROCKDOC_ASSIGN_OR_RETURN(Value iso, EvaluateOptional(args[2], vars));
  if (iso.ok() && !iso.element().IsNull() && iso.type() != BsonType::kBool) {
    return Failed(40521, "iso8601 must evaluate to a bool, found " + TypeName(iso));
  }
  if (IsNullish(date) || null_zone || (args[2] != nullptr && IsNullish(iso))) return NullValue();
  ROCKDOC_ASSIGN_OR_RETURN(int64_t ms, DateMillis(date));
  const Fields f = FieldsOf(ms, zone);
  return Make([&](BsonBuilder& b) {
    b.OpenDocument("v");
    if (iso.ok() && iso.element().Bool()) {
      int64_t iso_year = 0;
      int iso_week = 0;
      IsoWeek(absl::CivilDay(f.local), &iso_year, &iso_week);
      b.AppendInt32("isoWeekYear", static_cast<int32_t>(iso_year));
      b.AppendInt32("isoWeek", iso_week);
      b.AppendInt32("isoDayOfWeek", IsoDayOfWeek(absl::CivilDay(f.local)));
    } else {
      b.AppendInt32("year", static_cast<int32_t>(f.local.year()));
      b.AppendInt32("month", f.local.month());
      b.AppendInt32("day", f.local.day());
    }
    b.AppendInt32("hour", f.local.hour());
    b.AppendInt32("minute", f.local.minute());
    b.AppendInt32("second", f.local.second());
    b.AppendInt32("millisecond", f.millis);
    b.Close();
  });
}

// {year, month, day, hour, minute, second, millisecond, timezone,
//  isoWeekYear, isoWeek, isoDayOfWeek}
StatusOr<Value> DateFromPartsOp(const Args& args, const ExpressionVariables& vars) {
  static const char* const kNames[] = {"year", "month", "day", "hour", "minute", "second",
                                       "millisecond", "timezone", "isoWeekYear", "isoWeek",
                                       "isoDayOfWeek"};
  const bool iso = args[8] != nullptr;
  if (iso && args[0] != nullptr) {
    return Failed(40489, "$dateFromParts does not allow mixing natural dates with ISO dates");
  }
  if (!iso && args[0] == nullptr) {
    return Failed(40516, "$dateFromParts requires either 'year' or 'isoWeekYear' to be present");
  }
  if (iso && (args[1] != nullptr || args[2] != nullptr)) {
    return Failed(40489, "$dateFromParts does not allow mixing natural dates with ISO dates");
  }
  if (!iso && (args[9] != nullptr || args[10] != nullptr)) {
    return Failed(40525, "$dateFromParts does not allow mixing natural dates with ISO dates");
  }
  int64_t parts[11] = {1970, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1};
  bool null = false;
  for (int i = 0; i < 11; ++i) {
    if (i == 7 || args[i] == nullptr) continue;
    ROCKDOC_ASSIGN_OR_RETURN(Value v, args[i]->Evaluate(vars));
    if (IsNullish(v)) {
      null = true;
      continue;
    }
    int64_t n = 0;
    if (!v.element().IsNumber() || !v.element().ExactInt64(&n)) {
      return Failed(40515, std::string("'") + kNames[i] + "' must evaluate to an integer, found " +
                               TypeName(v) + " with value " + Shown(v));
    }
    const bool is_year = i == 0 || i == 8;
    if (is_year ? (n < 1 || n > 9999) : (n < -32768 || n > 32767)) {
      return Failed(is_year ? 40523 : 31034,
                    std::string("'") + kNames[i] + "' must evaluate to a value in the range " +
                        (is_year ? "[1, 9999]" : "[-32768, 32767]") + "; found " + std::to_string(n));
    }
    parts[i] = n;
  }
  bool null_zone = false;
  ROCKDOC_ASSIGN_OR_RETURN(absl::TimeZone zone, ZoneOf(args[7], vars, &null_zone));
  if (null || null_zone) return NullValue();
  absl::CivilDay day;
  if (iso) {
    const absl::CivilDay jan4(parts[8], 1, 4);
    day = jan4 - (IsoDayOfWeek(jan4) - 1) + (parts[9] - 1) * 7 + (parts[10] - 1);
  } else {
    // Months and days out of range carry into the larger unit.
    day = absl::CivilDay(absl::CivilMonth(parts[0], 1) + (parts[1] - 1)) + (parts[2] - 1);
  }
  const absl::CivilSecond local = absl::CivilSecond(day) + parts[3] * 3600 + parts[4] * 60 + parts[5];
  const int64_t extra_seconds = FloorDiv(parts[6], 1000);
  return DateValue(MillisOf(local + extra_seconds, static_cast<int>(parts[6] - extra_seconds * 1000), zone));
}

// ---- $dateTrunc, $dateAdd, $dateSubtract, $dateDiff ----

enum class Unit { kYear, kQuarter, kMonth, kWeek, kDay, kHour, kMinute, kSecond, kMillisecond };

StatusOr<Unit> UnitOf(std::string_view op, const Value& v) {
  if (v.type() != BsonType::kString) {
    return Failed(5439013, std::string(op) + " requires 'unit' to be a string, but got " + TypeName(v));
  }
  static const std::pair<std::string_view, Unit> kUnits[] = {
      {"year", Unit::kYear}, {"quarter", Unit::kQuarter}, {"month", Unit::kMonth},
      {"week", Unit::kWeek}, {"day", Unit::kDay}, {"hour", Unit::kHour},
      {"minute", Unit::kMinute}, {"second", Unit::kSecond}, {"millisecond", Unit::kMillisecond}};
  for (const auto& [name, unit] : kUnits) {
    if (v.element().String() == name) return unit;
  }
  return Failed(9, std::string(op) + " parameter 'unit' value parsing failed :: caused by :: "
                                     "unknown time unit value: " + std::string(v.element().String()));
}

// The first day of a week, as ISO day of week (Monday 1).
StatusOr<int> StartOfWeek(std::string_view op, const ExpressionPtr& arg, const ExpressionVariables& vars, bool* null) {
  if (arg == nullptr) return 7;  // Sunday
  ROCKDOC_ASSIGN_OR_RETURN(Value v, arg->Evaluate(vars));
  if (IsNullish(v)) {
    *null = true;
    return 7;
  }
  if (v.type() == BsonType::kString) {
    static const char* const kDays[] = {"monday", "tuesday", "wednesday", "thursday",
                                        "friday", "saturday", "sunday"};
    static const char* const kShort[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
    std::string lower(v.element().String());
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (int i = 0; i < 7; ++i) {
      if (lower == kDays[i] || lower == kShort[i]) return i + 1;
    }
  }
  return Failed(5439015, std::string(op) + " parameter 'startOfWeek' value cannot be recognized as "
                                           "a day of a week: " + Shown(v));
}

// MongoDB's reference week: the first day on or after 2000-01-01 (a
// Saturday, ISO day 6) that starts a week.
absl::CivilDay WeekOrigin(int week_start) {
  return absl::CivilDay(2000, 1, 1) + (week_start - 6 + 7) % 7;
}

// The number of `unit` boundaries from the epoch-ish origin to `t` (local
// time): months since year 0 for month-based units, days for days, ...
int64_t UnitsSinceOrigin(const absl::CivilSecond& t, int millis, Unit unit, int week_start) {
  const absl::CivilDay day(t);
  switch (unit) {
    case Unit::kYear: return t.year();
    case Unit::kQuarter: return t.year() * 4 + (t.month() - 1) / 3;
    case Unit::kMonth: return t.year() * 12 + (t.month() - 1);
    case Unit::kWeek: return FloorDiv(day - WeekOrigin(week_start), 7);
    case Unit::kDay: return day - absl::CivilDay(2000, 1, 1);
    case Unit::kHour: return FloorDiv(t - absl::CivilSecond(2000, 1, 1, 0, 0, 0), 3600);
    case Unit::kMinute: return FloorDiv(t - absl::CivilSecond(2000, 1, 1, 0, 0, 0), 60);
    case Unit::kSecond: return t - absl::CivilSecond(2000, 1, 1, 0, 0, 0);
    case Unit::kMillisecond: return (t - absl::CivilSecond(2000, 1, 1, 0, 0, 0)) * 1000 + millis;
  }
  return 0;
}

// The local time at the start of unit number `n` (UnitsSinceOrigin's inverse).
absl::CivilSecond StartOfUnit(int64_t n, Unit unit, int week_start, int* millis) {
  *millis = 0;
  const absl::CivilSecond origin(2000, 1, 1, 0, 0, 0);
  switch (unit) {
    case Unit::kYear: return absl::CivilSecond(n, 1, 1, 0, 0, 0);
    case Unit::kQuarter: return absl::CivilSecond(absl::CivilMonth(FloorDiv(n, 4), 1) + (n - FloorDiv(n, 4) * 4) * 3);
    case Unit::kMonth: return absl::CivilSecond(absl::CivilMonth(FloorDiv(n, 12), 1) + (n - FloorDiv(n, 12) * 12));
    case Unit::kWeek: return absl::CivilSecond(WeekOrigin(week_start) + n * 7);
    case Unit::kDay: return absl::CivilSecond(absl::CivilDay(2000, 1, 1) + n);
    case Unit::kHour: return origin + n * 3600;
    case Unit::kMinute: return origin + n * 60;
    case Unit::kSecond: return origin + n;
    case Unit::kMillisecond: {
      const int64_t s = FloorDiv(n, 1000);
      *millis = static_cast<int>(n - s * 1000);
      return origin + s;
    }
  }
  return origin;
}

// {date, unit, binSize, timezone, startOfWeek}
StatusOr<Value> DateTruncOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value date, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value unit_v, args[1]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value bin_v, EvaluateOptional(args[2], vars));
  bool null_zone = false;
  ROCKDOC_ASSIGN_OR_RETURN(absl::TimeZone zone, ZoneOf(args[3], vars, &null_zone));
  const bool null = null_zone || IsNullish(date) || IsNullish(unit_v) ||
                    (args[2] != nullptr && IsNullish(bin_v));
  bool null_week = false;
  ROCKDOC_ASSIGN_OR_RETURN(int week_start, StartOfWeek("$dateTrunc", args[4], vars, &null_week));
  if (null || null_week) return NullValue();
  ROCKDOC_ASSIGN_OR_RETURN(Unit unit, UnitOf("$dateTrunc", unit_v));
  int64_t bin = 1;
  if (bin_v.ok() && (!bin_v.element().IsNumber() || !bin_v.element().ExactInt64(&bin) || bin <= 0)) {
    return Failed(5439017, "$dateTrunc requires 'binSize' to be a positive 64-bit integer, but got value '" +
                               Shown(bin_v) + "' of type " + TypeName(bin_v));
  }
  ROCKDOC_ASSIGN_OR_RETURN(int64_t ms, DateMillis(date));
  const Fields f = FieldsOf(ms, zone);
  const int64_t n = UnitsSinceOrigin(f.local, f.millis, unit, week_start);
  // Years, quarters and months count bins from 2000 as MongoDB does.
  int64_t base = 0;
  if (unit == Unit::kYear) base = 2000;
  if (unit == Unit::kQuarter) base = 2000 * 4;
  if (unit == Unit::kMonth) base = 2000 * 12;
  const int64_t bin_start = base + FloorDiv(n - base, bin) * bin;
  int millis = 0;
  const absl::CivilSecond start = StartOfUnit(bin_start, unit, week_start, &millis);
  return DateValue(MillisOf(start, millis, zone));
}

// {startDate, unit, amount, timezone}
template <bool kAdd>
StatusOr<Value> DateAddOp(const Args& args, const ExpressionVariables& vars) {
  const char* op = kAdd ? "$dateAdd" : "$dateSubtract";
  ROCKDOC_ASSIGN_OR_RETURN(Value date, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value unit_v, args[1]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value amount_v, args[2]->Evaluate(vars));
  bool null_zone = false;
  ROCKDOC_ASSIGN_OR_RETURN(absl::TimeZone zone, ZoneOf(args[3], vars, &null_zone));
  if (IsNullish(date) || IsNullish(unit_v) || IsNullish(amount_v) || null_zone) return NullValue();
  if (date.type() != BsonType::kDateTime && date.type() != BsonType::kObjectId &&
      date.type() != BsonType::kTimestamp) {
    return Failed(5166403, std::string(op) + " requires startDate to be convertible to a date");
  }
  ROCKDOC_ASSIGN_OR_RETURN(Unit unit, UnitOf(op, unit_v));
  int64_t amount = 0;
  if (!amount_v.element().IsNumber() || !amount_v.element().ExactInt64(&amount)) {
    return Failed(5166405, std::string(op) + " expects integer amount of time units");
  }
  if (!kAdd) amount = -amount;
  ROCKDOC_ASSIGN_OR_RETURN(int64_t ms, DateMillis(date));
  auto fixed = [&](int64_t unit_ms) -> StatusOr<Value> {
    int64_t delta = 0, out = 0;
    if (__builtin_mul_overflow(amount, unit_ms, &delta) || __builtin_add_overflow(ms, delta, &out)) {
      return Failed(5166406, std::string(op) + " overflowed");
    }
    return DateValue(out);
  };
  switch (unit) {
    case Unit::kMillisecond: return fixed(1);
    case Unit::kSecond: return fixed(1000);
    case Unit::kMinute: return fixed(60'000);
    case Unit::kHour: return fixed(3'600'000);
    default: break;
  }
  if (std::abs(amount) > 1'000'000'000) return Failed(5166406, std::string(op) + " overflowed");
  const Fields f = FieldsOf(ms, zone);
  absl::CivilSecond local = f.local;
  if (unit == Unit::kDay || unit == Unit::kWeek) {
    local = absl::CivilSecond(absl::CivilDay(local) + amount * (unit == Unit::kWeek ? 7 : 1)) +
            (local - absl::CivilSecond(absl::CivilDay(local)));
  } else {
    const int64_t months = amount * (unit == Unit::kYear ? 12 : unit == Unit::kQuarter ? 3 : 1);
    const absl::CivilMonth month = absl::CivilMonth(local) + months;
    // The day of month stays, or becomes the last day of a shorter month.
    const absl::CivilDay last = absl::CivilDay(month + 1) - 1;
    const int day = std::min(local.day(), last.day());
    local = absl::CivilSecond(month.year(), month.month(), day, local.hour(), local.minute(), local.second());
  }
  return DateValue(MillisOf(local, f.millis, zone));
}

// {startDate, endDate, unit, timezone, startOfWeek}: unit boundaries crossed.
StatusOr<Value> DateDiffOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value start, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value end, args[1]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value unit_v, args[2]->Evaluate(vars));
  bool null = false;
  ROCKDOC_ASSIGN_OR_RETURN(absl::TimeZone zone, ZoneOf(args[3], vars, &null));
  bool null_week = false;
  ROCKDOC_ASSIGN_OR_RETURN(int week_start, StartOfWeek("$dateDiff", args[4], vars, &null_week));
  if (IsNullish(start) || IsNullish(end) || IsNullish(unit_v) || null || null_week) return NullValue();
  ROCKDOC_ASSIGN_OR_RETURN(Unit unit, UnitOf("$dateDiff", unit_v));
  ROCKDOC_ASSIGN_OR_RETURN(int64_t a, DateMillis(start));
  ROCKDOC_ASSIGN_OR_RETURN(int64_t b, DateMillis(end));
  if (unit == Unit::kMillisecond) return Int64Value(b - a);
  const Fields fa = FieldsOf(a, zone), fb = FieldsOf(b, zone);
  if (unit == Unit::kHour || unit == Unit::kMinute || unit == Unit::kSecond) {
    // Fixed-length units count boundaries of UTC time (as MongoDB's).
    const int64_t size = unit == Unit::kHour ? 3'600'000 : unit == Unit::kMinute ? 60'000 : 1000;
    return Int64Value(FloorDiv(b, size) - FloorDiv(a, size));
  }
  return Int64Value(UnitsSinceOrigin(fb.local, fb.millis, unit, week_start) -
                    UnitsSinceOrigin(fa.local, fa.millis, unit, week_start));
}

const char* const kDatePartNames[] = {"$year", "$month", "$dayOfMonth", "$hour", "$minute",
                                      "$second", "$millisecond", "$dayOfWeek", "$dayOfYear",
                                      "$week", "$isoWeek", "$isoWeekYear", "$isoDayOfWeek"};

}  // namespace

std::string FormatIsoDate(int64_t ms) {
  std::string out;
  (void)FormatDate(kIsoFormat, ms, absl::UTCTimeZone(), &out);
  return out;
}

StatusOr<int64_t> ParseDateString(std::string_view s) {
  ParsedDate p;
  ROCKDOC_RETURN_IF_ERROR(ParseIso(s, &p));
  return ParsedMillis(s, p, absl::UTCTimeZone());
}

bool IsDatePartOperator(std::string_view name) {
  for (const char* n : kDatePartNames) {
    if (name == n) return true;
  }
  return false;
}

void AddDateOperators(OperatorTable* positional, NamedOperatorTable* named) {
  positional->insert({
      {"$year", {&DatePartOp<DatePart::kYear>, 1, 1}},
      {"$month", {&DatePartOp<DatePart::kMonth>, 1, 1}},
      {"$dayOfMonth", {&DatePartOp<DatePart::kDayOfMonth>, 1, 1}},
      {"$hour", {&DatePartOp<DatePart::kHour>, 1, 1}},
      {"$minute", {&DatePartOp<DatePart::kMinute>, 1, 1}},
      {"$second", {&DatePartOp<DatePart::kSecond>, 1, 1}},
      {"$millisecond", {&DatePartOp<DatePart::kMillisecond>, 1, 1}},
      {"$dayOfWeek", {&DatePartOp<DatePart::kDayOfWeek>, 1, 1}},
      {"$dayOfYear", {&DatePartOp<DatePart::kDayOfYear>, 1, 1}},
      {"$week", {&DatePartOp<DatePart::kWeek>, 1, 1}},
      {"$isoWeek", {&DatePartOp<DatePart::kIsoWeek>, 1, 1}},
      {"$isoWeekYear", {&DatePartOp<DatePart::kIsoWeekYear>, 1, 1}},
      {"$isoDayOfWeek", {&DatePartOp<DatePart::kIsoDayOfWeek>, 1, 1}},
  });
  named->insert({
      {"$dateToString", {&DateToStringOp, {"date", "format", "timezone", "onNull"}, 1, 18629, 18534, 18628}},
      {"$dateFromString", {&DateFromStringOp, {"dateString", "format", "timezone", "onError", "onNull"}, 1, 40540, 40541, 40542}},
      {"$dateToParts", {&DateToPartsOp, {"date", "timezone", "iso8601"}, 1, 40524, 40520, 40522}},
      {"$dateFromParts", {&DateFromPartsOp, {"year", "month", "day", "hour", "minute", "second", "millisecond", "timezone", "isoWeekYear", "isoWeek", "isoDayOfWeek"}, 0, 40519, 40518, 40516}},
      {"$dateTrunc", {&DateTruncOp, {"date", "unit", "binSize", "timezone", "startOfWeek"}, 2, 5439007, 5439008, 5439009}},
      {"$dateAdd", {&DateAddOp<true>, {"startDate", "unit", "amount", "timezone"}, 3, 5166400, 5166401, 5166402}},
      {"$dateSubtract", {&DateAddOp<false>, {"startDate", "unit", "amount", "timezone"}, 3, 5166400, 5166401, 5166402}},
      {"$dateDiff", {&DateDiffOp, {"startDate", "endDate", "unit", "timezone", "startOfWeek"}, 3, 5166301, 5166302, 5166303}},
  });
}

}  // namespace rockdoc::internal::expression_detail
