//! Interface A, the chat service (components/chat), as its clients meet it over HTTP under
//! `runtime-host`. A chat test that needs Spin's own stores goes under [`crate::spin`].

mod api;
mod data;
mod hostile;
mod reply;
