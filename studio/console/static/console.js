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

  // ---------------------------------------------------------------- announcements
  // Live regions present from page load (base.html), so that a screen reader reads what
  // is written into them later: polite for notices and most alerts, assertive for a
  // critical alert (a table paused). Never the focus: the user stays where they are.
  function announce(text, assertive) {
    const region = document.getElementById(assertive ? "announce-assertive" : "announce-polite");
    if (!region || !text) return;
    // Emptied first, so that the same words twice are read twice.
    region.textContent = "";
    setTimeout(() => { region.textContent = text; }, 100);
  }

  // A notice drawn with the page (an action's result after its redirect) is not news to
  // a screen reader, which reads changes only: said again into the region once it is read.
  setTimeout(() => {
    const error = document.querySelector(".flash.error");
    const notice = document.querySelector(".flash.notice");
    if (error) announce(error.textContent.trim(), true);
    else if (notice) announce(notice.textContent.trim(), false);
  }, 500);

  // ---------------------------------------------------------------- alert cue
  const banner = document.getElementById("alert-banner");
  const bannerText = document.getElementById("alert-banner-text");
  const baseTitle = document.title;
  let unseen = 0;

  function alertCue(alert) {
    window.studioCues += 1;
    unseen += 1;
    document.title = "(" + unseen + ") " + baseTitle;
    const text = "New " + alert.severity + " alert on " + alert.table + ": " + alert.message;
    announce(text, alert.severity === "critical");
    if (banner && bannerText) {
      bannerText.textContent = text;
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
  const drawn = new WeakMap(); // element -> the fragment HTML last drawn in it
  const failing = new Set(); // fragments whose last fetch failed

  // A live update patches the fragment in place (morph), it does not redraw it: an element
  // whose content did not change stays the same element, so the focus, a screen reader's
  // place and a half-typed field survive the several updates a second of a busy floor.
  // Elements are matched by a stable key where they have one (id, an alert card's
  // data-key, a table card, a form's action), else by position and tag.
  function keyOf(node) {
    if (node.nodeType !== Node.ELEMENT_NODE) return "";
    const key =
      node.id ||
      node.dataset.key ||
      node.dataset.tableCard ||
      node.dataset.openAlert ||
      (node.nodeName === "FORM" ? node.getAttribute("action") || "" : "");
    return key ? node.nodeName + "|" + key : "";
  }

  // A form the user has typed in or is in is left exactly as it is: the fresh card is
  // patched around it (an alert acknowledged meanwhile shows its new state), never wiped.
  function keptForm(node) {
    return (
      node.nodeName === "FORM" &&
      (node.classList.contains("dirty") || node.contains(document.activeElement))
    );
  }

  function morphAttributes(old, fresh) {
    for (const attr of Array.from(old.attributes)) {
      // A <details> the user opened (a chart's values, a resolution's before and after)
      // stays open: the server never draws one open, and the fresh copy's missing `open`
      // folded it again at every update.
      if (attr.name === "open" && old.nodeName === "DETAILS") continue;
      if (!fresh.hasAttribute(attr.name)) old.removeAttribute(attr.name);
    }
    for (const attr of Array.from(fresh.attributes)) {
      if (old.getAttribute(attr.name) !== attr.value) old.setAttribute(attr.name, attr.value);
    }
  }

  function morphNode(old, fresh) {
    if (old.nodeType !== Node.ELEMENT_NODE) {
      if (old.nodeValue !== fresh.nodeValue) old.nodeValue = fresh.nodeValue;
      return;
    }
    if (keptForm(old)) return;
    morphAttributes(old, fresh);
    morphChildren(old, fresh);
  }

  function morphChildren(parent, freshParent) {
    const oldKeyed = new Map();
    parent.childNodes.forEach((node) => {
      const key = keyOf(node);
      if (key && !oldKeyed.has(key)) oldKeyed.set(key, node);
    });
    let cursor = parent.firstChild;
    Array.from(freshParent.childNodes).forEach((fresh) => {
      const key = keyOf(fresh);
      let match = null;
      if (key) {
        match = oldKeyed.get(key) || null;
        oldKeyed.delete(key);
      } else if (
        cursor && !keyOf(cursor) && cursor.nodeType === fresh.nodeType && cursor.nodeName === fresh.nodeName
      ) {
        match = cursor;
      }
      if (match === null) {
        parent.insertBefore(fresh, cursor);
        return;
      }
      if (match === cursor) {
        cursor = cursor.nextSibling;
      } else {
        parent.insertBefore(match, cursor); // moved: the focus is given back afterwards
      }
      morphNode(match, fresh);
    });
    while (cursor) {
      const next = cursor.nextSibling;
      parent.removeChild(cursor);
      cursor = next;
    }
  }

  // Where the focus was, should its element go after all (its card gone, its link now
  // another): the nearest keyed ancestor, and the control's own name within it.
  function focusPlace(container, active) {
    if (!active || active === body || !container.contains(active)) return null;
    let holder = active.parentElement;
    while (holder && holder !== container && !keyOf(holder)) holder = holder.parentElement;
    const attrs = ["name", "value", "href", "action"]
      .filter((a) => active.hasAttribute(a))
      .map((a) => "[" + a + '="' + CSS.escape(active.getAttribute(a)) + '"]');
    return {
      holder: holder && holder !== container ? keyOf(holder) : "",
      selector: active.nodeName.toLowerCase() + attrs.join(""),
    };
  }

  function findPlace(container, place) {
    let scope = container;
    if (place.holder) {
      scope = Array.from(container.querySelectorAll("*")).find((n) => keyOf(n) === place.holder);
      if (!scope) return null;
    }
    return scope.querySelector(place.selector);
  }

  function morph(container, html) {
    const fresh = document.createElement("div");
    fresh.innerHTML = html;
    const active = document.activeElement;
    const place = focusPlace(container, active);
    const selection =
      active && typeof active.selectionStart === "number"
        ? [active.selectionStart, active.selectionEnd, active.selectionDirection]
        : null;
    morphChildren(container, fresh);
    if (!place || document.activeElement === active) return;
    // A moved element lost the focus: give it back, caret included; one gone for good
    // hands it to its equivalent (same card, same name) rather than to the page.
    const target = active.isConnected && container.contains(active) ? active : findPlace(container, place);
    if (!target) return;
    target.focus({ preventScroll: true });
    if (selection && target === active) {
      try { active.setSelectionRange(...selection); } catch (err) { /* not a text field */ }
    }
  }

  // At most one fetch of a fragment in flight and one more waiting behind it, a fetch
  // starting no sooner than MIN_GAP_MS after the last one's start: a busy floor's messages
  // (several a second per table, for every table on the overview) merge into the waiting
  // fetch instead of costing one each. None is lost: a message always leads to a fetch that
  // starts after it (the waiting one, or one queued behind the fetch in flight).
  const MIN_GAP_MS = 250;
  const lastStart = new Map(); // element -> when its last fetch started
  const queued = new Map(); // element -> delay of the fetch to start once the one in flight ends

  function schedule(el, delay) {
    if (inflight.has(el)) {
      // Starts after the fetch in flight, whose answer may predate the message.
      queued.set(el, Math.min(queued.has(el) ? queued.get(el) : delay, delay));
      return;
    }
    if (pending.has(el)) return; // not yet started: it will show this message too
    const since = Date.now() - (lastStart.get(el) || 0);
    const wait = Math.max(delay, MIN_GAP_MS - since);
    pending.set(el, setTimeout(() => { pending.delete(el); refresh(el); }, wait));
  }

  async function refresh(el) {
    if (inflight.has(el)) {
      schedule(el, 0);
      return;
    }
    const timer = pending.get(el);
    if (timer !== undefined) {
      clearTimeout(timer); // this fetch serves the waiting one too
      pending.delete(el);
    }
    lastStart.set(el, Date.now());
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
      if (!response.ok) {
        fragmentFailed(el);
        return;
      }
      const html = await response.text();
      // Nothing changed: nothing is touched (a screen reader's place in it included).
      if (drawn.get(el) !== html) {
        morph(el, html);
        drawn.set(el, html);
      }
      fragmentFetched(el);
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
      // The server is gone or the network failed: said, and tried again (fragmentFailed).
      fragmentFailed(el);
    } finally {
      inflight.delete(el);
      if (queued.has(el)) {
        const after = queued.get(el);
        queued.delete(el);
        schedule(el, after);
      }
    }
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

  let socketState = "offline";

  function setStatus(text) {
    socketState = text;
    body.dataset.liveState = text;
    renderStatus();
  }

  // The pill says what the page shows: live only while the socket is up AND the last
  // fetch of every fragment worked (a failed one is said, not ignored, and retried).
  function renderStatus() {
    if (!status) return;
    const text = socketState === "live" && failing.size ? "update failed" : socketState;
    status.textContent = text;
    status.dataset.state = text;
  }

  // ---------------------------------------------------------------- not live
  // The dealer display (its #not-live notice) must never show an instruction it is no
  // longer sure of: with the socket down for a moment, a fragment fetch failed, or the
  // socket silent past two keep-alive pings, it blanks the instruction and says so, until
  // the socket is back and the instruction has been fetched again.
  const notLive = document.getElementById("not-live");
  const SOCKET_GRACE_MS = 2000; // a reconnect (server restart, 1012) is not yet an outage
  const SILENCE_MS = 40000; // the server pings an idle socket every 15 s
  let socketDownSince = Date.now(); // not yet open: as if it had just gone down
  let lastHeard = Date.now();
  let freshSinceOpen = true; // the page as the server drew it

  function checkLive() {
    const now = Date.now();
    const down = socketState !== "live" && now - socketDownSince > SOCKET_GRACE_MS;
    const silent = socketState === "live" && now - lastHeard > SILENCE_MS;
    // Back within the grace but not yet fetched again: still shown (a blink of the notice
    // at every quick reconnect would teach the dealer to ignore it).
    const unsure = !freshSinceOpen && now - socketDownSince > SOCKET_GRACE_MS;
    const stale = down || silent || unsure || failing.size > 0;
    body.classList.toggle("stale", stale);
    body.dataset.notLive = stale ? "yes" : "no"; // read by the browser tests
    if (notLive) notLive.hidden = !stale;
  }

  function fragmentFailed(el) {
    failing.add(el);
    renderStatus();
    checkLive();
    schedule(el, 2000); // tried again: the display comes back by itself
  }

  function fragmentFetched(el) {
    failing.delete(el);
    if (socketState === "live" && !el.hasAttribute("data-broker-link")) freshSinceOpen = true;
    renderStatus();
    checkLive();
  }

  if (notLive) setInterval(checkLive, 500);

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const query = live && live !== "*" ? "?table=" + encodeURIComponent(live) : "";
    const ws = new WebSocket(scheme + location.host + "/console/ws" + query);
    let opened = false;
    ws.onopen = () => {
      opened = true;
      delay = 1000;
      lastHeard = Date.now();
      setStatus("live");
      // Catch up on anything that happened before the socket opened or while away.
      document.querySelectorAll("[data-fragment]").forEach((el) => schedule(el, 50));
    };
    ws.onmessage = (event) => {
      lastHeard = Date.now();
      let msg;
      try { msg = JSON.parse(event.data); } catch (err) { return; }
      if (msg.channel === "ping") return;
      if (msg.channel === "alerts" && msg.data) {
        noticeOpenAlert(msg.data);
      }
      refreshFor(msg.table, msg.channel);
    };
    ws.onclose = (event) => {
      if (socketState === "live") socketDownSince = Date.now();
      // What was missed while down is fetched again before the display is trusted.
      freshSinceOpen = false;
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
