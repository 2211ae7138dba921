// Studio console: live refresh of server-rendered fragments, alert cues, small form helpers.
// Plain JavaScript, no build step. The server renders every fragment; this file only
// decides when to fetch one again.
"use strict";

(function () {
  const body = document.body;
  const live = body.dataset.live; // "*" for every table, a table id, or undefined
  const noSound = body.hasAttribute("data-no-sound");
  const seenAlerts = new Set();
  window.studioCues = 0; // alert cues shown (visual), read by the browser tests
  window.studioBeeps = 0; // beeps actually played

  // The open alerts the page was drawn with (alert cards, and the marks every live
  // fragment carries) are no news.
  document.querySelectorAll("[data-alert-id]").forEach((el) => seenAlerts.add(el.dataset.alertId));
  document.querySelectorAll("[data-open-alert]").forEach((el) => seenAlerts.add(el.dataset.openAlert));

  // ---------------------------------------------------------------- sound
  let audio = null;
  // A click in this page has asked the browser for sound (its autoplay policy wants one).
  let unlockAsked = false;
  const soundButton = document.getElementById("sound-toggle");

  function soundWanted() {
    return !noSound && localStorage.getItem("studio-sound") !== "off";
  }

  function ensureAudio() {
    if (!audio && window.AudioContext) {
      audio = new AudioContext();
      body.dataset.audio = audio.state; // read by the browser tests
      audio.addEventListener("statechange", () => { body.dataset.audio = audio.state; });
    }
    if (audio && audio.state === "suspended") {
      audio.resume().catch(() => {});
    }
    return audio;
  }

  function unlockSound() {
    unlockAsked = true;
    ensureAudio();
    renderSoundButton();
  }

  function beep() {
    if (!soundWanted()) return;
    const ctx = ensureAudio();
    if (!ctx || ctx.state !== "running") return; // the browser wants a click first
    const now = ctx.currentTime;
    [0, 0.25].forEach((offset) => {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.type = "square";
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.0001, now + offset);
      gain.gain.exponentialRampToValueAtTime(0.2, now + offset + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + offset + 0.18);
      osc.connect(gain).connect(ctx.destination);
      osc.start(now + offset);
      osc.stop(now + offset + 0.2);
    });
    window.studioBeeps += 1;
  }

  function renderSoundButton() {
    if (!soundButton) return;
    const on = soundWanted();
    const state = !on ? "off" : unlockAsked ? "on" : "locked";
    soundButton.textContent = { off: "sound off", on: "♪ sound on", locked: "♪ enable sound" }[state];
    soundButton.dataset.sound = state;
    soundButton.classList.toggle("off", !on);
  }

  if (soundButton) {
    soundButton.addEventListener("click", () => {
      // Sound wanted but not yet unlocked in this page: the first click unlocks it and
      // leaves it on. Afterwards a click turns it off or on (remembered across pages).
      if (!(soundWanted() && !unlockAsked)) {
        localStorage.setItem("studio-sound", soundWanted() ? "off" : "on");
      }
      if (soundWanted()) {
        unlockSound();
      } else {
        renderSoundButton();
      }
    });
    renderSoundButton();
  }
  // Any click unlocks audio for later alerts (autoplay policy). The sound button's own
  // listener runs first, so its first click still counts as the unlocking one.
  document.addEventListener("click", () => { if (soundWanted()) unlockSound(); }, { once: true });

  // ---------------------------------------------------------------- alert cue
  const banner = document.getElementById("alert-banner");
  const bannerText = document.getElementById("alert-banner-text");
  const baseTitle = document.title;
  let unseen = 0;

  function alertCue(alert) {
    window.studioCues += 1;
    unseen += 1;
    document.title = "(" + unseen + ") " + baseTitle;
    if (banner && bannerText) {
      bannerText.textContent = "New " + alert.severity + " alert on " + alert.table + ": " + alert.message;
      banner.hidden = false;
      banner.classList.remove("flash-in");
      void banner.offsetWidth; // restart the animation
      banner.classList.add("flash-in", "sev-" + alert.severity);
    }
    beep();
  }

  function noticeAlert(alert) {
    if (!alert.alert_id || seenAlerts.has(alert.alert_id)) return;
    seenAlerts.add(alert.alert_id);
    alertCue(alert);
  }

  // Open, that is raised or acknowledged: one a dealer acknowledged before this page
  // heard of it (its socket down) still waits for a manager.
  function noticeOpenAlert(alert) {
    if (alert.state === "raised" || alert.state === "acknowledged") noticeAlert(alert);
  }

  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) {
      unseen = 0;
      document.title = baseTitle;
    }
  });

  // ---------------------------------------------------------------- fragments
  const pending = new Map(); // element -> timer
  const inflight = new Set();

  function keyedSwap(container, html) {
    // Keep what a user is typing into an alert card: a card is keyed by its alert id
    // (data-key), and a form of it that is dirty or holds the focus is carried over into
    // the fresh card, which shows the alert's new state (acknowledged, say) around it.
    const fresh = document.createElement("div");
    fresh.innerHTML = html;
    const active = document.activeElement;
    const selection =
      active && typeof active.selectionStart === "number"
        ? [active.selectionStart, active.selectionEnd, active.selectionDirection]
        : null;
    fresh.querySelectorAll("[data-key]").forEach((node) => {
      const old = container.querySelector('[data-key="' + CSS.escape(node.dataset.key) + '"]');
      if (!old) return;
      node.querySelectorAll("form[action]").forEach((form) => {
        const action = form.getAttribute("action");
        const kept = Array.from(old.querySelectorAll("form[action]")).find(
          (f) => f.getAttribute("action") === action,
        );
        if (kept && (kept.classList.contains("dirty") || kept.contains(active))) {
          form.replaceWith(kept);
        }
      });
    });
    container.replaceChildren(...fresh.childNodes);
    // Moving the field out and back in took its focus: give it back, caret included.
    if (active && active !== document.activeElement && active.isConnected && container.contains(active)) {
      active.focus({ preventScroll: true });
      if (selection) {
        try { active.setSelectionRange(...selection); } catch (err) { /* not a text field */ }
      }
    }
  }

  async function refresh(el) {
    if (inflight.has(el)) {
      schedule(el, 150);
      return;
    }
    inflight.add(el);
    try {
      const response = await fetch(el.dataset.fragment, {
        headers: { Accept: "text/html" },
        credentials: "same-origin",
        cache: "no-store",
      });
      if (response.status === 401 || response.redirected) {
        window.location.reload(); // session over: the page shows the login form
        return;
      }
      if (!response.ok) return;
      const html = await response.text();
      if (el.hasAttribute("data-keyed")) {
        keyedSwap(el, html);
      } else {
        el.innerHTML = html;
      }
      // An alert may show up in a fragment before its own message arrives, or without it
      // (raised while the socket was down, then re-fetched at its opening): every live
      // fragment carries the open alerts, and each is cued once, whichever comes first,
      // acknowledged or not (one a dealer acknowledged meanwhile still needs a manager).
      el.querySelectorAll("[data-alert-id]").forEach((a) => {
        const message = a.querySelector(".message");
        noticeOpenAlert({
          alert_id: a.dataset.alertId,
          state: a.dataset.alertState,
          severity: a.dataset.severity,
          table: a.dataset.alertTable,
          message: message ? message.textContent : "",
        });
      });
      el.querySelectorAll("[data-open-alert]").forEach((a) => {
        noticeOpenAlert({
          alert_id: a.dataset.openAlert,
          state: a.dataset.markState,
          severity: a.dataset.markSeverity,
          table: a.dataset.markTable,
          message: a.dataset.markMessage || "",
        });
      });
      if (el.hasAttribute("data-broker-link")) {
        // Polled: not counted with the fragments a message or the socket's opening refreshed.
        brokerChecked(el);
        return;
      }
      el.dispatchEvent(new CustomEvent("studio:refreshed", { bubbles: true }));
      body.dataset.refreshes = String(Number(body.dataset.refreshes || 0) + 1);
    } catch (err) {
      // Network blip: the next message or the reconnect refreshes again.
    } finally {
      inflight.delete(el);
    }
  }

  function schedule(el, delay) {
    if (pending.has(el)) return;
    pending.set(el, setTimeout(() => { pending.delete(el); refresh(el); }, delay));
  }

  function refreshFor(table, channel) {
    document.querySelectorAll("[data-fragment]").forEach((el) => {
      const t = el.dataset.table;
      if (t !== "*" && t !== table) return;
      const channels = el.dataset.channels;
      if (channels && channel && !channels.split(",").includes(channel)) return;
      schedule(el, 80);
    });
  }

  // The controller's link to the broker (its banner, polled): when it goes down or comes
  // back, every live fragment is drawn again (devices unknown, or as heard again), since
  // no message comes through a controller that hears nothing.
  function brokerState(el) {
    const mark = el.querySelector("[data-broker]");
    return mark ? mark.dataset.broker : "";
  }
  let brokerSeen = null;
  document.querySelectorAll("[data-broker-link]").forEach((el) => {
    brokerSeen = brokerState(el);
    body.dataset.broker = brokerSeen;
  });

  function brokerChecked(el) {
    const state = brokerState(el);
    body.dataset.broker = state; // read by the browser tests
    if (brokerSeen !== null && state !== brokerSeen) {
      document.querySelectorAll("[data-fragment]").forEach((other) => {
        if (other !== el) schedule(other, 20);
      });
    }
    brokerSeen = state;
  }

  document.querySelectorAll("[data-refresh]").forEach((el) => {
    setInterval(() => refresh(el), Number(el.dataset.refresh) * 1000);
  });
  // Polled only by a live page (as its socket): each poll uses the session, and a page
  // without live data (the round search) must not keep it from its idle timeout.
  if (live) {
    document.querySelectorAll("[data-refresh-live]").forEach((el) => {
      setInterval(() => refresh(el), Number(el.dataset.refreshLive) * 1000);
    });
  }

  // ---------------------------------------------------------------- live socket
  const status = document.getElementById("live-status");
  let delay = 1000;

  function setStatus(text) {
    if (status) {
      status.textContent = text;
      status.dataset.state = text;
    }
    body.dataset.liveState = text;
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const query = live && live !== "*" ? "?table=" + encodeURIComponent(live) : "";
    const ws = new WebSocket(scheme + location.host + "/console/ws" + query);
    let opened = false;
    ws.onopen = () => {
      opened = true;
      delay = 1000;
      setStatus("live");
      // Catch up on anything that happened before the socket opened or while away.
      document.querySelectorAll("[data-fragment]").forEach((el) => schedule(el, 50));
    };
    ws.onmessage = (event) => {
      let msg;
      try { msg = JSON.parse(event.data); } catch (err) { return; }
      if (msg.channel === "ping") return;
      if (msg.channel === "alerts" && msg.data) {
        noticeOpenAlert(msg.data);
      }
      refreshFor(msg.table, msg.channel);
    };
    ws.onclose = (event) => {
      setStatus("reconnecting");
      if (event.code === 4401) {
        window.location.reload();
        return;
      }
      setTimeout(connect, opened ? 1000 : delay);
      delay = Math.min(delay * 2, 10000);
    };
  }

  if (live) {
    connect();
  } else if (status) {
    status.hidden = true; // a page without live data has no connection to show
  }

  // ---------------------------------------------------------------- forms
  document.addEventListener("input", (event) => {
    const form = event.target.closest && event.target.closest("form");
    if (form) form.classList.add("dirty");
  });
  document.addEventListener("submit", (event) => {
    const form = event.target;
    const question = form.dataset.confirm;
    if (question && !window.confirm(question)) {
      event.preventDefault();
    }
  });

  const fullscreen = document.getElementById("fullscreen");
  if (fullscreen) {
    fullscreen.addEventListener("click", () => {
      document.documentElement.requestFullscreen().catch(() => {});
    });
  }
})();
