//===- ConfigInput.cpp - reading a ds_config.json within bounds -----------===//
//
// The config file is read only when it is a regular file, without blocking
// (a FIFO with no writer is refused, not waited on) and up to a byte limit
// (/dev/zero is refused, not read forever). It is parsed with a SAX handler
// that bounds the nesting depth before the DOM grows, rejects duplicate keys
// as DeepSpeed does, and appends each object member in constant time
// (ordered_json's own DOM parser searches the object for every key, which is
// quadratic in the number of keys).
//
//===----------------------------------------------------------------------===//
#include "ConfigSchema.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_set>

namespace zeroc::dsconfig {

namespace {

/// Closes a file descriptor when it goes out of scope.
class FdCloser {
public:
  explicit FdCloser(int fd) : fd(fd) {}
  ~FdCloser() { ::close(fd); }
  FdCloser(const FdCloser &) = delete;
  FdCloser &operator=(const FdCloser &) = delete;

private:
  int fd;
};

std::string fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a plain file";
}

/// `size`: the file's size, or 0 when only "over the limit" is known.
[[noreturn]] void tooLarge(uint64_t size, uint64_t maxBytes) {
  std::string is = size ? "is " + std::to_string(size) + " bytes, " : "is ";
  throw ConfigError("the config file " + is + "over the limit of " +
                    std::to_string(maxBytes) +
                    " bytes (raise it with --max-config-bytes N)");
}

/// Reads at most maxBytes + 1 bytes of `fd`.
std::string readAtMost(int fd, uint64_t maxBytes, uint64_t sizeHint) {
  std::string text;
  text.reserve(static_cast<size_t>(std::min(sizeHint, maxBytes) + 1));
  char buf[1 << 16];
  while (text.size() <= maxBytes) {
    size_t want =
        static_cast<size_t>(std::min<uint64_t>(sizeof buf, maxBytes + 1 - text.size()));
    ssize_t n = ::read(fd, buf, want);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw ConfigError(std::string("cannot read the config file: ") +
                        std::strerror(errno));
    if (n == 0)
      break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

/// Builds the ordered_json DOM from nlohmann's SAX events.
class DomBuilder {
public:
  ojson root;

  bool null() { return put(nullptr); }
  bool boolean(bool v) { return put(v); }
  bool number_integer(ojson::number_integer_t v) { return put(v); }
  bool number_unsigned(ojson::number_unsigned_t v) { return put(v); }
  bool number_float(ojson::number_float_t v, const std::string &) {
    return put(v);
  }
  bool string(std::string &v);
  bool binary(ojson::binary_t &v) { return put(ojson::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(ojson::object()); }
  bool start_array(std::size_t) { return open(ojson::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string &k);
  bool parse_error(std::size_t, const std::string &lastToken,
                   const nlohmann::detail::exception &e);

private:
  struct Frame {
    ojson *value;
    std::unordered_set<std::string> keys; ///< objects: the keys so far
    std::string key;                      ///< objects: the current key
  };
  std::vector<Frame> stack;
  ojson *member = nullptr; ///< the slot key() made for the next value

  ojson &slot();
  bool put(ojson v) {
    slot() = std::move(v);
    return true;
  }
  bool open(ojson v);
  bool close() {
    stack.pop_back();
    return true;
  }
  std::string keyPath() const;
};

/// Where the next value goes: the root, a new array element or the member
/// the last key made.
ojson &DomBuilder::slot() {
  if (stack.empty())
    return root;
  ojson &top = *stack.back().value;
  if (top.is_array()) {
    top.get_ref<ojson::array_t &>().emplace_back();
    return top.get_ref<ojson::array_t &>().back();
  }
  return *member;
}

bool DomBuilder::open(ojson v) {
  if (stack.size() >= kMaxConfigDepth)
    throw ConfigError("the config nests objects and arrays deeper than " +
                      std::to_string(kMaxConfigDepth) +
                      " levels (zeroc's limit)");
  ojson &s = slot();
  s = std::move(v);
  stack.push_back({&s, {}, {}});
  return true;
}

bool DomBuilder::string(std::string &v) {
  // Strings become paths and names in C strings: a NUL would cut them.
  if (v.find('\0') != std::string::npos)
    throw ConfigError((keyPath().empty() ? std::string("a value")
                                         : keyPath()) +
                      " holds a NUL character (\\u0000), which no path or "
                      "name may hold");
  return put(std::move(v));
}

bool DomBuilder::key(std::string &k) {
  if (k.find('\0') != std::string::npos)
    throw ConfigError("a key holds a NUL character (\\u0000): " + echo(k));
  Frame &top = stack.back();
  top.key = k;
  if (!top.keys.insert(k).second)
    throw ConfigError("duplicate key '" + keyPath() +
                      "' (DeepSpeed rejects duplicate keys)");
  // The key is new: append without ordered_map's linear search.
  auto &members = top.value->get_ref<ojson::object_t &>();
  members.emplace_back(std::move(k), nullptr);
  member = &members.back().second;
  return true;
}

std::string DomBuilder::keyPath() const {
  std::string path;
  for (const Frame &f : stack)
    if (f.value->is_object())
      path += (path.empty() ? "" : ".") + echo(f.key);
  return path;
}

bool DomBuilder::parse_error(std::size_t, const std::string &lastToken,
                             const nlohmann::detail::exception &e) {
  // nlohmann quotes the token it stopped at; cut it as every echo is cut.
  std::string msg = e.what();
  std::string quoted = "'" + lastToken + "'";
  size_t at = msg.rfind(quoted);
  if (at != std::string::npos)
    msg.replace(at, quoted.size(), "'" + echo(lastToken) + "'");
  throw ConfigError("not valid JSON: " + oneLine(msg));
}

} // namespace

std::string readConfigFile(const std::string &path, uint64_t maxBytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw ConfigError(std::string("cannot open the config file: ") +
                      std::strerror(errno));
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0)
    throw ConfigError(std::string("cannot stat the config file: ") +
                      std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw ConfigError("not a regular file (" + fileKind(st.st_mode) +
                      "); give a ds_config.json file");
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > maxBytes)
    tooLarge(size, maxBytes);
  std::string text = readAtMost(fd, maxBytes, size);
  if (text.size() > maxBytes) // it grew since fstat
    tooLarge(0, maxBytes);
  return text;
}

ojson parseConfigJson(const std::string &text) {
  DomBuilder builder;
  ojson::sax_parse(text, &builder, ojson::input_format_t::json,
                   /*strict=*/true, /*ignore_comments=*/true);
  return std::move(builder.root);
}

} // namespace zeroc::dsconfig
