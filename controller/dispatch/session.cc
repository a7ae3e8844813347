// The space's session with its inner server: one login per space at a time (everyone else waits
// for it), with the token read back over exec; renewed at 90 % of its life; a refused login
// re-reads the token once and tries once more.
#include "appliance/http/parser.h"
#include "controller/dispatch/internal.h"

namespace controller::dispatch {

namespace {

using appliance::http::MessageParser;

class LoginCall final : public InnerStream::Sink, public appliance::http::BodySink {
 public:
  using Done = std::function<void(int status, std::optional<Session> session, bool reusable)>;
  LoginCall(DispatcherImpl& d, InnerStream* st, Done done)
      : d_(d), st_(st), done_(std::move(done)), parser_(MessageParser::Kind::kResponse, *this) {
    uv_timer_init(d.loop, &timer_);
    timer_.data = this;
  }
  void start(const std::string& token) {
    const std::string body = "{\"password\":\"" + token + "\"}";
    std::string req = "POST /auth/session HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(d_.config.inner_port) +
                      "\r\nContent-Type: application/json\r\nAccept-Encoding: identity\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\nConnection: keep-alive\r\n\r\n" + body;
    st_->attach(this);
    uv_timer_start(&timer_, [](uv_timer_t* t) noexcept { static_cast<LoginCall*>(t->data)->end(0, false); }, kLoginMs, 0);
    if (!st_->write(std::move(req))) end(0, false);
    std::fill(req.begin(), req.end(), '\0');
  }
  void on_inner_data(const char* data, std::size_t length) override {
    const MessageParser::Feed f = parser_.feed(data, length);
    if (f.status == MessageParser::Status::kError) return end(0, false);
    if (f.status == MessageParser::Status::kComplete) return end(parser_.status_code(), f.consumed == length && parser_.keep_alive());
  }
  void on_inner_end(bool) override {
    const MessageParser::Feed f = parser_.finish();
    end(f.status == MessageParser::Status::kComplete ? parser_.status_code() : 0, false);
  }
  bool on_head() override { return true; }
  void on_body(const char*, std::size_t length) override { body_bytes_ += length; }
  void on_complete() override {}

 private:
  void end(int status, bool reusable) {
    if (ended_) return;
    ended_ = true;
    uv_timer_stop(&timer_);
    std::optional<Session> session;
    if (status >= 200 && status < 300) {
      for (const appliance::http::Header& h : parser_.headers()) {
        if (h.name.size() == 10 && (h.name == "Set-Cookie" || h.name == "set-cookie" || h.name == "SET-COOKIE")) {
          session = parse_session_cookie(h.value);
          break;
        }
      }
    }
    d_.release(st_, reusable && status != 0);
    done_(status, std::move(session), reusable);
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), [](uv_handle_t* h) noexcept { delete static_cast<LoginCall*>(h->data); });
  }

  DispatcherImpl& d_;
  InnerStream* st_;
  Done done_;
  MessageParser parser_;
  uv_timer_t timer_{};
  std::size_t body_bytes_ = 0;
  bool ended_ = false;
};

}  // namespace

Refusal refusal_for(const Failure& f) {
  switch (f.code) {
    case Code::kSpaceNotFound: return Refusal::kSpaceNotFound;
    case Code::kSpaceNotRunning: return Refusal::kSpaceNotRunning;
    case Code::kSpaceBusy: return Refusal::kSpaceBusy;
    case Code::kUsage: case Code::kPlaceUnreachable: case Code::kPlaceUnusable: case Code::kPlaceNotFound:
    case Code::kVerifyFailed: case Code::kGatekeeperNotReady: case Code::kGatekeeperRefused:
    case Code::kGatekeeperUnreachable: case Code::kCommandFailed: case Code::kCommandTimeout:
    case Code::kOutputTooLarge: case Code::kImageMissing: case Code::kRecordUnreadable:
    case Code::kInvalidArgument: case Code::kInterrupted: case Code::kInternal:
    case Code::kProjectFolderMissing: case Code::kNotAGitWorkTree: case Code::kRepositoryHasNoCommit:
    case Code::kUnmergedChanges: case Code::kSpaceRefExists: case Code::kInvalidBranchName:
    case Code::kProjectFolderDoesNotTravel: case Code::kRepositoryUnsupported: case Code::kSpacePathInUse:
    case Code::kSpaceGitUnusable: case Code::kCodeTransferFailed: case Code::kCodeUnfoldFailed:
    case Code::kHistoryTransferFailed: case Code::kCodeInFailed: case Code::kImageMismatch:
    case Code::kSpaceStartMissing: case Code::kResultTransferTooLarge: case Code::kResultTooLarge:
    case Code::kResultTooManyChanges: case Code::kResultRefused: case Code::kResultMissing: case Code::kCodeOutFailed:
    case Code::kBranchExists: case Code::kChangesRouteClosed: case Code::kChangesTooLarge: case Code::kNameNotAllowedHere:
    case Code::kCaseOnlyRename: case Code::kChangesBlockedByLink: case Code::kChangesDoNotApply:
    case Code::kChangesPartlyApplied: case Code::kChangesUndecided: case Code::kChangesNeedFilter: case Code::kApplyFailed:
    case Code::kSecretSourceMissing:
    case Code::kSecretHelperFailed:
    case Code::kProviderNotSupported:
      break;
  }
  return f.message == "space_busy" ? Refusal::kSpaceBusy : Refusal::kSpaceUnreachable;
}

void DispatcherImpl::session(const std::string& id, std::function<void(std::optional<Refusal>)> ready) {
  SpaceState& s = space(id);
  if (!s.cookie.empty() && Clock::now() < s.renew_at) return ready(std::nullopt);
  s.login_waiters.push_back(std::move(ready));
  if (s.logging_in) return;
  s.logging_in = true;
  login(id, /*reread=*/s.token.empty());
}

void DispatcherImpl::login(const std::string& id, bool reread) {
  auto finish = [this, id](std::optional<Refusal> r) {
    SpaceState& s = space(id);
    s.logging_in = false;
    std::vector<std::function<void(std::optional<Refusal>)>> waiters;
    waiters.swap(s.login_waiters);
    for (auto& w : waiters) w(r);
  };
  auto attempt = [this, id, reread, finish] {
    stream(id, false, [this, id, reread, finish](InnerStream* st, std::optional<Failure> f) {
      if (f) return finish(refusal_for(*f));
      SpaceState& s = space(id);
      auto* call = new LoginCall(*this, st, [this, id, reread, finish](int status, std::optional<Session> session, bool) {
        SpaceState& sp = space(id);
        if (session) {
          sp.cookie = session->cookie;
          sp.renew_at = Clock::now() + std::chrono::milliseconds(renew_after_ms(session->max_age_s));
          return finish(std::nullopt);
        }
        if (status == 401 || status == 403) {
          // The token we hold may be stale (a restart rotated it): read it again, once.
          if (!reread) return login(id, true);
          return finish(Refusal::kSpaceLoginFailed);
        }
        finish(status == 0 ? Refusal::kSpaceUnreachable : Refusal::kSpaceLoginFailed);
      });
      call->start(s.token);
    });
  };
  if (!reread) return attempt();
  auto token = std::make_shared<Result<std::string>>(fail(Code::kInternal, "read token: not run"));
  blocking([this, id, token] { *token = config.read_token ? config.read_token(id) : fail(Code::kInternal, "read token: no hook"); },
           [this, id, token, attempt, finish] {
             if (!*token || !token_well_formed(token->value())) {
               // The reason stays here: the client learns only the code (never the file's bytes).
               if (!*token && (token->error().code == Code::kSpaceNotRunning || token->error().code == Code::kSpaceNotFound))
                 return finish(refusal_for(token->error()));
               return finish(Refusal::kSpaceTokenUnreadable);
             }
             space(id).token = std::move(token->value());
             attempt();
           });
}

}  // namespace controller::dispatch
