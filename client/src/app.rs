//! The client with its I/O: one connection per host, the core in between, and one channel every
//! event comes through (the hosts', the front-end's input, signals). The front-ends (the TUI,
//! headless, the replay harness) own the loop: they take the next event, hand it here, and show
//! the changes that come back.

use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use schema::Hello;

use crate::config::{Config, NotifyConfig};
use crate::connection::{Connection, Spec};
use crate::transport;
use client_core::client::{Change, Client, Command, Effect, HostEvent};
use client_core::session::Policy;

/// One event of the loop; `I` is the front-end's own input.
// Each value is made once and moved once, through a channel: boxing its large variants buys
// nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Event<I> {
    /// A host's connection reported something.
    Host(usize, HostEvent),
    /// The front-end's input: a key, a command line.
    Input(I),
    /// SIGTERM, SIGINT or SIGHUP.
    Signal(i32),
}

/// How the hosts are reached and greeted.
#[derive(Debug, Clone)]
pub struct HostSpec {
    /// The configured name.
    pub name: String,
    /// The connection.
    pub spec: Spec,
}

/// The hosts of a configuration, following their fleets.
pub fn hosts_of(config: &Config) -> Vec<HostSpec> {
    config
        .hosts
        .iter()
        .map(|host| {
            let device = match &host.target {
                crate::config::Target::Ssh { device, .. } => device.clone(),
                crate::config::Target::Local { device, .. } => Some(device.clone()),
                crate::config::Target::Command(_) => None,
            };
            HostSpec {
                name: host.name.clone(),
                spec: Spec {
                    argv: Some(transport::argv(&host.target)),
                    hello: hello(device.unwrap_or_default()),
                    policy: Policy::follow(),
                },
            }
        })
        .collect()
}

/// The hello this client says; `device` is only a claim the host logs.
pub fn hello(device: String) -> Hello {
    Hello {
        app: "corral-remote".into(),
        app_version: env!("CARGO_PKG_VERSION").into(),
        device,
    }
}

/// The running client.
#[derive(Debug)]
pub struct App<I> {
    client: Client,
    names: Vec<String>,
    connections: Vec<Connection>,
    notify: NotifyConfig,
    sender: Sender<Event<I>>,
    events: Receiver<Event<I>>,
}

impl<I: Send + 'static> App<I> {
    /// Connects to every host.
    pub fn start(hosts: Vec<HostSpec>, notify: NotifyConfig) -> App<I> {
        let (sender, events) = mpsc::channel();
        let names: Vec<String> = hosts.iter().map(|h| h.name.clone()).collect();
        let connections = hosts
            .into_iter()
            .enumerate()
            .map(|(index, host)| {
                let to = sender.clone();
                Connection::start(host.spec, move |event| {
                    let _ = to.send(Event::Host(index, event));
                })
            })
            .collect();
        App {
            client: Client::new(names.clone()),
            names,
            connections,
            notify,
            sender,
            events,
        }
    }

    /// Where the front-end sends its input and signals.
    pub fn sender(&self) -> Sender<Event<I>> {
        self.sender.clone()
    }

    /// The next event, waiting at most `timeout`.
    pub fn next(&self, timeout: Duration) -> Option<Event<I>> {
        self.events.recv_timeout(timeout).ok()
    }

    /// The core.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The configured name of a host.
    pub fn name(&self, host: usize) -> &str {
        &self.names[host]
    }

    /// Whether the bell rings.
    pub fn bell(&self) -> bool {
        self.notify.bell
    }

    /// A user command: its requests go out, its immediate changes come back.
    pub fn command(&mut self, command: Command) -> Result<Vec<Change>, String> {
        let effects = self.client.command(command, stdx::now_ms())?;
        Ok(self.perform(effects))
    }

    /// A host's report: the changes to show.
    pub fn host_event(&mut self, host: usize, event: HostEvent) -> Vec<Change> {
        let effects = self.client.host_event(host, event, stdx::now_ms());
        self.perform(effects)
    }

    fn perform(&mut self, effects: Vec<Effect>) -> Vec<Change> {
        let mut changes = Vec::new();
        for effect in effects {
            match effect {
                Effect::Send { host, request } => self.connections[host].request(request),
                Effect::Show(change) => {
                    let failed = self.ring_command(&change);
                    changes.push(change);
                    changes.extend(failed);
                }
            }
        }
        changes
    }

    /// Runs the ring command of an attention change; a failure to run it is a change too.
    fn ring_command(&self, change: &Change) -> Option<Change> {
        let Change::Attention { host, row } = change else {
            return None;
        };
        let command = self.notify.command.as_ref()?;
        let why = crate::notify::run(command, &self.names[*host], row, stdx::now_ms()).err()?;
        Some(Change::Failed {
            host: *host,
            pane: Some(row.pane.clone()),
            what: "ring command",
            code: None,
            message: why,
        })
    }

    /// Closes every connection (their hosts get end of input) and waits for them.
    pub fn shutdown(self) {
        let App { connections, .. } = self;
        let handles: Vec<_> = connections
            .into_iter()
            .map(|c| std::thread::spawn(move || c.shutdown()))
            .collect();
        for handle in handles {
            let _ = handle.join();
        }
    }
}
