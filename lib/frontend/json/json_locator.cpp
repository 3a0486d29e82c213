// JSON position index: a skim over already-validated JSON text recording where values start.
#include "json_locator.h"

#include <algorithm>

namespace hologram::frontend::json {

JsonLocator::JsonLocator(std::string_view text) : text_(text) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') line_starts_.push_back(i + 1);
}

void JsonLocator::build_index() const {
  if (indexed_) return;
  auto *self = const_cast<JsonLocator *>(this); // the index is a cache of positions
  self->indexed_ = true;
  self->skip_ws();
  if (self->pos_ < text_.size()) self->parse_value("", 0);
}

void JsonLocator::skip_value() {
  // Past the depth limit: step over one value without recursion (brackets and strings).
  int depth = 0;
  do {
    if (pos_ >= text_.size()) return;
    char c = text_[pos_];
    if (c == '"') {
      read_string();
      continue;
    }
    if (c == '[' || c == '{')
      ++depth;
    else if (c == ']' || c == '}')
      --depth;
    else if (depth == 0 &&
             (c == ',' || std::string_view(" \t\r\n").find(c) != std::string_view::npos))
      return;
    ++pos_;
  } while (depth > 0);
}

std::string JsonLocator::escape(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

void JsonLocator::skip_ws() {
  while (pos_ < text_.size() &&
         (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
    ++pos_;
}

std::string JsonLocator::read_string() {
  // Returns the raw (escape sequences kept except \" and \\) key text; keys in kernels are
  // plain identifiers, so an approximate decoding is enough for pointer matching.
  std::string out;
  ++pos_; // opening quote
  while (pos_ < text_.size() && text_[pos_] != '"') {
    if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) {
      char e = text_[pos_ + 1];
      out += (e == 'n' ? '\n' : e == 't' ? '\t' : e);
      pos_ += e == 'u' ? 6 : 2;
      continue;
    }
    out += text_[pos_++];
  }
  ++pos_; // closing quote
  return out;
}

void JsonLocator::parse_value(const std::string &pointer, unsigned depth) {
  values_.emplace(pointer, pos_);
  if (pos_ >= text_.size()) return;
  if (depth > 512) { // deeper nodes report the position of this ancestor
    skip_value();
    return;
  }
  char c = text_[pos_];
  if (c == '{') {
    ++pos_;
    skip_ws();
    while (pos_ < text_.size() && text_[pos_] != '}') {
      size_t key_pos = pos_;
      std::string key = read_string();
      skip_ws();
      ++pos_; // ':'
      skip_ws();
      std::string child = pointer + "/" + escape(key);
      keys_.emplace(child, key_pos);
      parse_value(child, depth + 1);
      skip_ws();
      if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
      skip_ws();
    }
    ++pos_;
  } else if (c == '[') {
    ++pos_;
    skip_ws();
    size_t index = 0;
    while (pos_ < text_.size() && text_[pos_] != ']') {
      parse_value(pointer + "/" + std::to_string(index++), depth + 1);
      skip_ws();
      if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
      skip_ws();
    }
    ++pos_;
  } else if (c == '"') {
    read_string();
  } else {
    while (pos_ < text_.size() &&
           std::string_view(",]} \t\r\n").find(text_[pos_]) == std::string_view::npos)
      ++pos_;
  }
}

SourceLoc JsonLocator::at_offset(size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  auto line = static_cast<uint32_t>(it - line_starts_.begin());
  return {line, static_cast<uint32_t>(offset - line_starts_[line - 1] + 1)};
}

SourceLoc JsonLocator::value(const std::string &pointer) const {
  build_index();
  std::string p = pointer;
  while (true) {
    if (auto it = values_.find(p); it != values_.end()) return at_offset(it->second);
    if (p.empty()) return {1, 1};
    p.erase(p.rfind('/'));
  }
}

SourceLoc JsonLocator::key(const std::string &pointer) const {
  build_index();
  if (auto it = keys_.find(pointer); it != keys_.end()) return at_offset(it->second);
  return value(pointer);
}

} // namespace hologram::frontend::json
