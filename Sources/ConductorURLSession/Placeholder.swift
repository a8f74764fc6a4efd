public import Conductor
